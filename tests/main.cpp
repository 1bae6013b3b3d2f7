// dhtproxytests: CppUnit runner.
//
//   dhtproxytests                 run every registered test
//   dhtproxytests NAME...         run only the tests whose full name contains one of NAME
//                                 (e.g. "ServerRoutesTest" or "ServerRoutesTest::testGet")
//   dhtproxytests --list          print the test names
//
// It ends with a line "dhtproxytests: N passed, N failed" and exits non-zero on any failure.
#include <cppunit/CompilerOutputter.h>
#include <cppunit/Test.h>
#include <cppunit/TestFailure.h>
#include <cppunit/TestListener.h>
#include <cppunit/TestResult.h>
#include <cppunit/TestResultCollector.h>
#include <cppunit/extensions/TestFactoryRegistry.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

void collect(CppUnit::Test* test, std::vector<CppUnit::Test*>& out) {
    if (test->getChildTestCount() == 0) {
        out.push_back(test);
        return;
    }
    for (int i = 0; i < test->getChildTestCount(); ++i)
        collect(test->getChildTestAt(i), out);
}

class ProgressListener : public CppUnit::TestListener {
public:
    void startTest(CppUnit::Test* test) override {
        failed_ = false;
        start_ = std::chrono::steady_clock::now();
        std::cout << test->getName() << " ... " << std::flush;
    }
    void addFailure(const CppUnit::TestFailure&) override { failed_ = true; }
    void endTest(CppUnit::Test*) override {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
        std::cout << (failed_ ? "FAILED" : "ok") << " (" << ms << " ms)" << std::endl;
    }

private:
    bool failed_ {false};
    std::chrono::steady_clock::time_point start_;
};

} // namespace

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    std::vector<std::string> filters;
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--list") == 0)
            list = true;
        else
            filters.emplace_back(argv[i]);
    }

    CppUnit::Test* suite = CppUnit::TestFactoryRegistry::getRegistry().makeTest();
    std::vector<CppUnit::Test*> tests;
    collect(suite, tests);

    if (list) {
        for (auto* t : tests)
            std::cout << t->getName() << '\n';
        return 0;
    }

    CppUnit::TestResult controller;
    CppUnit::TestResultCollector result;
    ProgressListener progress;
    controller.addListener(&result);
    controller.addListener(&progress);

    int run = 0;
    for (auto* t : tests) {
        bool selected = filters.empty();
        for (const auto& f : filters)
            selected = selected || t->getName().find(f) != std::string::npos;
        if (!selected)
            continue;
        ++run;
        t->run(&controller);
    }

    CppUnit::CompilerOutputter outputter(&result, std::cerr);
    if (result.testFailuresTotal() > 0)
        outputter.write();
    const int failed = result.testFailuresTotal();
    std::cout << "dhtproxytests: " << (run - failed) << " passed, " << failed << " failed" << std::endl;
    delete suite;
    return (failed == 0 && run > 0) ? 0 : 1;
}
