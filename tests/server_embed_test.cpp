// ProxyServer embedded in a caller-owned io_context, bind failures, pool mode.
#include "dhtgate/proxy_server.h"

#include "dhtgate/error.h"
#include "support/dht_node.h"
#include "support/raw_http_client.h"
#include "support/test_proxy.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <thread>

using namespace dhtgate::test;
using namespace std::chrono_literals;

class ServerEmbedTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ServerEmbedTest);
    CPPUNIT_TEST(testCallerOwnedIoContext);
    CPPUNIT_TEST(testBusyPortIsAnError);
    CPPUNIT_TEST(testBadAddress);
    CPPUNIT_TEST(testThreadPool);
    CPPUNIT_TEST(testStopBeforeStart);
    CPPUNIT_TEST(testIdleConnectionsClosedWithTheServer);
    CPPUNIT_TEST_SUITE_END();

public:
    void testCallerOwnedIoContext() {
        TestDhtNode node;
        asio::io_context io;
        auto work = asio::make_work_guard(io);
        dhtgate::ProxyServer server(node.runner(), TestProxy::testConfig());
        CPPUNIT_ASSERT(!server.start(io)); // before io runs
        CPPUNIT_ASSERT(server.port() != 0);
        std::thread runner([&] { io.run(); });

        auto r = RawHttpClient::exchange(server.port(), RawHttpClient::request("GET", "/"));
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(200, r->status);
        // The server's work runs on the caller's thread.
        std::promise<std::thread::id> ioThread;
        asio::post(io, [&] { ioThread.set_value(std::this_thread::get_id()); });
        CPPUNIT_ASSERT(ioThread.get_future().get() == runner.get_id());

        RawHttpClient listen(server.port());
        listen.send(RawHttpClient::request("GET", "/key/abc/listen"));
        CPPUNIT_ASSERT_EQUAL(200, listen.readHeaders()->status);
        // stop() from the io thread itself: returns without blocking, streams get their final chunk.
        std::promise<void> stopped;
        asio::post(io, [&] {
            server.stop();
            stopped.set_value();
        });
        auto f = stopped.get_future();
        CPPUNIT_ASSERT(ready(f));
        CPPUNIT_ASSERT(!listen.readLine());
        CPPUNIT_ASSERT(listen.streamEnded());
        work.reset();
        io.stop();
        runner.join();
    }

    void testBusyPortIsAnError() {
        TestProxy first;
        auto config = TestProxy::testConfig();
        config.port = first.port();
        dhtgate::ProxyServer second(first.node().runner(), config);
        const auto ec = second.start();
        CPPUNIT_ASSERT(ec == dhtgate::errc::bind_failed);
        CPPUNIT_ASSERT(!second.running());
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(0), second.port());
        // The first one is unaffected.
        CPPUNIT_ASSERT_EQUAL(200, RawHttpClient::exchange(first.port(), RawHttpClient::request("GET", "/"))->status);
    }

    void testBadAddress() {
        TestDhtNode node;
        auto config = TestProxy::testConfig();
        config.address = "not an address";
        dhtgate::ProxyServer server(node.runner(), config);
        CPPUNIT_ASSERT(server.start() == dhtgate::errc::invalid_config);
    }

    void testThreadPool() {
        auto config = TestProxy::testConfig();
        config.threads = 3;
        TestProxy proxy(config);
        std::vector<std::thread> clients;
        std::atomic<int> ok {0};
        for (int t = 0; t < 4; ++t)
            clients.emplace_back([&, t] {
                for (int i = 0; i < 10; ++i) {
                    const auto body = "{\"data\":\"aGk=\",\"id\":\"" + std::to_string(t * 100 + i + 1) + "\",\"type\":0}";
                    auto r = RawHttpClient::exchange(proxy.port(), RawHttpClient::request("POST", "/key/pool", body));
                    if (r && r->status == 200)
                        ++ok;
                }
            });
        for (auto& t : clients)
            t.join();
        CPPUNIT_ASSERT_EQUAL(40, ok.load());
        auto r = RawHttpClient::exchange(proxy.port(), RawHttpClient::request("GET", "/key/pool"));
        CPPUNIT_ASSERT(r);
        std::size_t lines = 0;
        for (char c : r->body)
            lines += c == '\n';
        CPPUNIT_ASSERT_EQUAL(std::size_t(40), lines);
    }

    void testIdleConnectionsClosedWithTheServer() {
        // Idle keep-alive connections (a read pending, nothing to answer) must not outlive the
        // server and its io_context: the host's sockets would leak.
        TestDhtNode node;
        for (bool ownIo : {true, false}) {
            auto io = std::make_unique<asio::io_context>();
            auto server = std::make_unique<dhtgate::ProxyServer>(node.runner(), TestProxy::testConfig());
            std::thread runner;
            if (ownIo) {
                CPPUNIT_ASSERT(!server->start());
            } else {
                CPPUNIT_ASSERT(!server->start(*io));
                runner = std::thread([&io] { io->run(); });
            }
            RawHttpClient idle(server->port(), std::chrono::seconds(5));
            idle.send(RawHttpClient::request("GET", "/"));
            auto r = idle.readResponse();
            CPPUNIT_ASSERT(r && r->status == 200);
            server->stop();
            if (runner.joinable()) {
                io->stop(); // the idle connection's read is still pending: io would run on
                runner.join();
            }
            server.reset();
            io.reset();
            CPPUNIT_ASSERT_MESSAGE(ownIo ? "own io" : "caller's io", idle.waitClosed());
        }
    }

    void testStopBeforeStart() {
        TestDhtNode node;
        dhtgate::ProxyServer server(node.runner(), TestProxy::testConfig());
        server.stop();
        server.stop();
        CPPUNIT_ASSERT(!server.running());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(ServerEmbedTest);
