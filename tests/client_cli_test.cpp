// dhtgate-cli (the built executable) against a scripted proxy: output and exit codes.
#include "support/scripted_server.h"

#include <cppunit/extensions/HelperMacros.h>

#include <array>
#include <cstdio>
#include <sys/wait.h>

using dhtgate::test::Reply;
using dhtgate::test::ScriptedServer;

namespace {

struct Run {
    int status;
    std::string output; // stdout and stderr
};

Run cli(const std::string& args) {
    const std::string command = std::string(DHTGATE_BINARY_DIR) + "/dhtgate-cli " + args + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    CPPUNIT_ASSERT(pipe);
    Run run{-1, {}};
    std::array<char, 4096> buf;
    while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe))
        run.output.append(buf.data(), n);
    const int raw = ::pclose(pipe);
    run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return run;
}

} // namespace

class ClientCliTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientCliTest);
    CPPUNIT_TEST(testCommands);
    CPPUNIT_TEST(testErrors);
    CPPUNIT_TEST_SUITE_END();

public:
    void testCommands() {
        ScriptedServer server([](const std::string& req, int, int) {
            if (req.compare(0, 5, "POST ") == 0)
                return Reply{ScriptedServer::ok("{\"data\":\"aGk=\",\"id\":\"5\",\"type\":0}\n"),
                             Reply::After::keepReading};
            if (req.compare(0, 9, "GET /key/") == 0)
                return Reply{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                 ScriptedServer::chunk("{\"data\":\"aGk=\",\"id\":\"5\",\"type\":0}\n") + "0\r\n\r\n",
                             Reply::After::keepReading};
            return Reply{ScriptedServer::ok("{\"node_id\":\"" + std::string(40, 'b') + "\"}\n"),
                         Reply::After::keepReading};
        });
        const std::string url = "--url " + server.url();
        auto r = cli(url + " info");
        CPPUNIT_ASSERT_EQUAL_MESSAGE(r.output, 0, r.status);
        CPPUNIT_ASSERT(r.output.find(std::string(40, 'b')) != std::string::npos);
        r = cli(url + " put testkey hi");
        CPPUNIT_ASSERT_EQUAL_MESSAGE(r.output, 0, r.status);
        CPPUNIT_ASSERT(r.output.find("\"id\":\"5\"") != std::string::npos);
        r = cli(url + " get testkey");
        CPPUNIT_ASSERT_EQUAL_MESSAGE(r.output, 0, r.status);
        CPPUNIT_ASSERT(r.output.find("\"data\":\"aGk=\"") != std::string::npos);
        // A non-hex key is hashed as the proxy does (spec §2).
        auto reqs = server.requests();
        CPPUNIT_ASSERT(reqs.at(1).find("POST /key/913a73b565c8e2c8ed94497580f619397709b8b6 ") == 0);
    }

    void testErrors() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 20\r\n\r\n{\"err\":\"Put failed\"}",
                         Reply::After::keepReading};
        });
        auto r = cli("--url " + server.url() + " put k v");
        CPPUNIT_ASSERT_EQUAL(1, r.status);
        CPPUNIT_ASSERT_MESSAGE(r.output, r.output.find("502") != std::string::npos);
        r = cli("--url http://127.0.0.1:1 info");
        CPPUNIT_ASSERT_EQUAL(1, r.status);
        CPPUNIT_ASSERT_MESSAGE(r.output, r.output.find("cannot reach") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(2, cli("bogus").status);
        CPPUNIT_ASSERT_EQUAL(2, cli("get").status);
        CPPUNIT_ASSERT_EQUAL(2, cli("--url ftp://x info").status);
        CPPUNIT_ASSERT_EQUAL(2, cli("--ca /nonexistent/ca.pem info").status);
        CPPUNIT_ASSERT_EQUAL(2, cli("get " + std::string(41, 'a')).status);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientCliTest);
