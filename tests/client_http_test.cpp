#include "dhtgate/http_client.h"

#include "dhtgate/error.h"
#include "support/scripted_server.h"

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <cppunit/extensions/HelperMacros.h>

#include <atomic>
#include <future>

using namespace std::chrono_literals;
using dhtgate::errc;
using dhtgate::http::Client;
using dhtgate::http::ClientOptions;
using dhtgate::http::Request;
using dhtgate::http::Response;
using dhtgate::test::Reply;
using dhtgate::test::ScriptedServer;

namespace {

struct Result {
    std::error_code ec;
    Response response;
};

/// Sends and returns a future of the completion; counts completions in `calls` if given.
std::future<Result> send(Client& client, Request req, std::atomic<int>* calls = nullptr,
                         dhtgate::http::RequestHandle* handle = nullptr) {
    auto promise = std::make_shared<std::promise<Result>>();
    auto future = promise->get_future();
    auto h = client.send(std::move(req), [promise, calls](std::error_code ec, Response r) {
        if (calls)
            ++*calls;
        promise->set_value({ec, std::move(r)});
    });
    if (handle)
        *handle = h;
    return future;
}

Result get(std::future<Result> f) {
    CPPUNIT_ASSERT(f.wait_for(15s) == std::future_status::ready);
    return f.get();
}

Reply okReply(const std::string& body) {
    return {ScriptedServer::ok(body), Reply::After::keepReading};
}

/// Completes a request through the client's io thread: everything posted earlier has run.
void drain(Client& client, ScriptedServer& server) {
    auto r = get(send(client, Request("GET", server.url("/drain"))));
    CPPUNIT_ASSERT(!r.ec);
}

} // namespace

class ClientHttpTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientHttpTest);
    CPPUNIT_TEST(testContentLength);
    CPPUNIT_TEST(testChunkedAndCloseDelimited);
    CPPUNIT_TEST(testMethodsHeadersBody);
    CPPUNIT_TEST(testKeepAliveReuse);
    CPPUNIT_TEST(testRetryWhenIdleConnectionClosed);
    CPPUNIT_TEST(testIpv6Loopback);
    CPPUNIT_TEST(testLocalhostTriesEveryAddress);
    CPPUNIT_TEST(testStreamingLines);
    CPPUNIT_TEST(testServerClosesMidResponse);
    CPPUNIT_TEST(testOversizedResponse);
    CPPUNIT_TEST(testProtocolError);
    CPPUNIT_TEST(testInvalidUrlIsAsync);
    CPPUNIT_TEST(testConnectRefused);
    CPPUNIT_TEST(testConnectTimeout);
    CPPUNIT_TEST(testRequestTimeout);
    CPPUNIT_TEST(testIdleTimeout);
    CPPUNIT_TEST(testCancelBeforeConnect);
    CPPUNIT_TEST(testCancelMidBody);
    CPPUNIT_TEST(testCancelMidStream);
    CPPUNIT_TEST(testCallerOwnedIoContext);
    CPPUNIT_TEST_SUITE_END();

public:
    void testContentLength() {
        ScriptedServer server([](const std::string&, int, int) { return okReply("{\"a\":1}\n"); });
        Client client;
        auto r = get(send(client, Request("GET", server.url("/node/info"))));
        CPPUNIT_ASSERT(!r.ec);
        CPPUNIT_ASSERT_EQUAL(200u, r.response.status);
        CPPUNIT_ASSERT_EQUAL(std::string("{\"a\":1}\n"), r.response.body);
        CPPUNIT_ASSERT(r.response.header("content-type"));
        CPPUNIT_ASSERT_EQUAL(std::string("application/json"), *r.response.header("Content-Type"));
        auto req = server.requests().at(0);
        CPPUNIT_ASSERT_EQUAL(0u, unsigned(req.find("GET /node/info HTTP/1.1\r\n")));
        CPPUNIT_ASSERT(req.find("Host: 127.0.0.1:" + std::to_string(server.port()) + "\r\n") != std::string::npos);
    }

    void testChunkedAndCloseDelimited() {
        ScriptedServer server([](const std::string& req, int, int) -> Reply {
            if (req.find("/chunked") != std::string::npos)
                return {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + ScriptedServer::chunk("abc\n") +
                            ScriptedServer::chunk(std::string(40000, 'x')) + "0\r\n\r\n",
                        Reply::After::keepReading};
            return {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall until close", Reply::After::close};
        });
        Client client;
        auto r = get(send(client, Request("GET", server.url("/chunked"))));
        CPPUNIT_ASSERT(!r.ec);
        CPPUNIT_ASSERT_EQUAL("abc\n" + std::string(40000, 'x'), r.response.body);
        // onData sees the decoded body (chunk framing removed) and nothing is accumulated.
        std::string streamed;
        r = get(send(client, Request("GET", server.url("/chunked")).setOnData([&](std::string_view d) {
            streamed.append(d);
            return true;
        })));
        CPPUNIT_ASSERT(!r.ec && r.response.body.empty());
        CPPUNIT_ASSERT_EQUAL("abc\n" + std::string(40000, 'x'), streamed);
        // HEAD: headers only, even with a Content-Length; the connection stays usable.
        ScriptedServer head([](const std::string&, int, int) {
            return Reply{"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", Reply::After::keepReading};
        });
        CPPUNIT_ASSERT(!get(send(client, Request("HEAD", head.url()))).ec);
        CPPUNIT_ASSERT(!get(send(client, Request("HEAD", head.url()))).ec);
        CPPUNIT_ASSERT_EQUAL(1, head.acceptedConnections());
        r = get(send(client, Request("GET", server.url("/close"))));
        CPPUNIT_ASSERT(!r.ec);
        CPPUNIT_ASSERT_EQUAL(std::string("all until close"), r.response.body);
    }

    void testMethodsHeadersBody() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{"HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\n\r\n", Reply::After::keepReading};
        });
        Client client;
        for (const char* method : {"SUBSCRIBE", "UNSUBSCRIBE", "POST", "OPTIONS"}) {
            auto r = get(send(client, Request(method, server.url("/key/abc")).addHeader("X-Test", "1").setBody("{}")));
            CPPUNIT_ASSERT(!r.ec);
            CPPUNIT_ASSERT_EQUAL(501u, r.response.status);
        }
        auto reqs = server.requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t(4), reqs.size());
        CPPUNIT_ASSERT_EQUAL(0u, unsigned(reqs[0].find("SUBSCRIBE /key/abc HTTP/1.1\r\n")));
        CPPUNIT_ASSERT_EQUAL(0u, unsigned(reqs[1].find("UNSUBSCRIBE /key/abc HTTP/1.1\r\n")));
        CPPUNIT_ASSERT(reqs[2].find("X-Test: 1\r\n") != std::string::npos);
        CPPUNIT_ASSERT(reqs[2].find("Content-Length: 2\r\n") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(std::string("\r\n\r\n{}"), reqs[2].substr(reqs[2].size() - 6));
    }

    void testKeepAliveReuse() {
        ScriptedServer server([](const std::string&, int, int i) { return okReply(std::to_string(i)); });
        Client client;
        for (int i = 0; i < 5; ++i) {
            auto r = get(send(client, Request("GET", server.url("/x"))));
            CPPUNIT_ASSERT(!r.ec);
            CPPUNIT_ASSERT_EQUAL(std::to_string(i), r.response.body);
        }
        CPPUNIT_ASSERT_EQUAL(1, server.acceptedConnections());
        // A pool bounded to zero idle connections never reuses.
        Client noPool(ClientOptions().setMaxIdlePerHost(0));
        for (int i = 0; i < 3; ++i)
            CPPUNIT_ASSERT(!get(send(noPool, Request("GET", server.url("/x")))).ec);
        CPPUNIT_ASSERT_EQUAL(4, server.acceptedConnections());
        // Two requests in flight need two connections; both are kept (limit 4 per host) and
        // reused. Both are queued before the caller-owned io_context runs, so the second cannot
        // find the first's connection already idle.
        {
            ScriptedServer pair([](const std::string&, int, int) { return okReply("p"); });
            asio::io_context io;
            Client pooled(io);
            int done = 0, failed = 0;
            auto both = [&](const char* x, const char* y) {
                const int target = done + 2;
                for (const char* path : {x, y})
                    pooled.send(Request("GET", pair.url(path)), [&](std::error_code ec, Response) {
                        ++done;
                        failed += ec ? 1 : 0;
                    });
                const auto deadline = std::chrono::steady_clock::now() + 10s;
                while (done < target && std::chrono::steady_clock::now() < deadline)
                    io.run_one_for(100ms);
            };
            both("/a", "/b");
            CPPUNIT_ASSERT_EQUAL(2, done);
            CPPUNIT_ASSERT_EQUAL(2, pair.acceptedConnections());
            both("/c", "/d");
            CPPUNIT_ASSERT_EQUAL(4, done);
            CPPUNIT_ASSERT_EQUAL(0, failed);
            CPPUNIT_ASSERT_EQUAL(2, pair.acceptedConnections());
        }
        // Connection: close from the server is honoured: no reuse.
        ScriptedServer closing([](const std::string&, int, int) {
            return Reply{ScriptedServer::ok("x", "Connection: close\r\n"), Reply::After::close};
        });
        for (int i = 0; i < 3; ++i)
            CPPUNIT_ASSERT(!get(send(client, Request("GET", closing.url()))).ec);
        CPPUNIT_ASSERT_EQUAL(3, closing.acceptedConnections());
    }

    void testRetryWhenIdleConnectionClosed() {
        // Keep-alive answer, then the server drops the idle connection: the next request is
        // retried on a new connection instead of failing.
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{ScriptedServer::ok("ok"), Reply::After::close};
        });
        Client client;
        CPPUNIT_ASSERT(!get(send(client, Request("GET", server.url()))).ec);
        CPPUNIT_ASSERT(server.waitForClose(0, 15s));
        auto r = get(send(client, Request("GET", server.url())));
        CPPUNIT_ASSERT(!r.ec);
        CPPUNIT_ASSERT_EQUAL(std::string("ok"), r.response.body);
        CPPUNIT_ASSERT_EQUAL(2, server.acceptedConnections());
    }

    void testIpv6Loopback() {
        ScriptedServer server([](const std::string&, int, int) { return okReply("v6"); }, true);
        Client client;
        auto r = get(send(client, Request("GET", server.url("/"))));
        CPPUNIT_ASSERT_MESSAGE(r.ec.message(), !r.ec);
        CPPUNIT_ASSERT_EQUAL(std::string("v6"), r.response.body);
        CPPUNIT_ASSERT(server.requests().at(0).find("Host: [::1]:") != std::string::npos);
    }

    void testLocalhostTriesEveryAddress() {
        // When localhost resolves to both ::1 and 127.0.0.1, only one of them listens: the
        // client must try the next address. (Some hosts map localhost to 127.0.0.1 only.)
        asio::io_context io;
        asio::ip::tcp::resolver resolver(io);
        bool hasV6 = false;
        for (const auto& e : resolver.resolve("localhost", "80"))
            hasV6 = hasV6 || e.endpoint().address().is_v6();
        for (bool v6 : {false, true}) {
            if (v6 && !hasV6)
                continue;
            ScriptedServer server([](const std::string&, int, int) { return okReply("hi"); }, v6);
            Client client;
            auto r = get(send(client, Request("GET", "http://localhost:" + std::to_string(server.port()) + "/")));
            CPPUNIT_ASSERT_MESSAGE(r.ec.message(), !r.ec);
            CPPUNIT_ASSERT_EQUAL(std::string("hi"), r.response.body);
        }
    }

    void testStreamingLines() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + ScriptedServer::chunk("one\ntw") +
                             ScriptedServer::chunk("o\r\n") + ScriptedServer::chunk("three\nfour") + "0\r\n\r\n",
                         Reply::After::keepReading};
        });
        Client client;
        std::vector<std::string> lines; // touched on the io thread only, read after completion
        auto r = get(send(client, Request("GET", server.url("/listen")).setOnLine([&](std::string_view l) {
            lines.emplace_back(l);
            return true;
        })));
        CPPUNIT_ASSERT(!r.ec);
        CPPUNIT_ASSERT(r.response.body.empty());
        CPPUNIT_ASSERT_EQUAL(std::size_t(4), lines.size());
        CPPUNIT_ASSERT_EQUAL(std::string("two"), lines[1]);
        CPPUNIT_ASSERT_EQUAL(std::string("four"), lines[3]);
    }

    void testServerClosesMidResponse() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part", Reply::After::close};
        });
        Client client;
        auto r = get(send(client, Request("GET", server.url())));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::connection_closed), r.ec);
    }

    void testOversizedResponse() {
        ScriptedServer server([](const std::string&, int, int) { return okReply(std::string(5000, 'x')); });
        Client client(ClientOptions().setMaxResponseSize(1000));
        auto r = get(send(client, Request("GET", server.url())));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::response_too_large), r.ec);
        // Streamed: only a line longer than the limit is too large.
        auto r2 = get(send(client, Request("GET", server.url()).setOnLine([](std::string_view) { return true; })));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::response_too_large), r2.ec);
    }

    void testProtocolError() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{"SSH-2.0-OpenSSH\r\n\r\n", Reply::After::stall};
        });
        Client client;
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::protocol_error), get(send(client, Request("GET", server.url()))).ec);
    }

    void testInvalidUrlIsAsync() {
        // A caller-owned io_context that is not running yet: anything called back from inside
        // send() would run before io.run().
        asio::io_context io;
        Client client(io);
        int calls = 0;
        std::error_code result;
        client.send(Request("GET", "ftp://nope/"), [&](std::error_code ec, Response) {
            ++calls;
            result = ec;
        });
        CPPUNIT_ASSERT_EQUAL(0, calls);
        io.run_for(5s);
        CPPUNIT_ASSERT_EQUAL(1, calls);
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::invalid_url), result);
    }

    void testConnectRefused() {
        asio::io_context io;
        asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
        auto port = a.local_endpoint().port();
        a.close();
        Client client;
        auto r = get(send(client, Request("GET", "http://127.0.0.1:" + std::to_string(port) + "/")));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::connect_failed), r.ec);
        CPPUNIT_ASSERT_EQUAL(0u, r.response.status);
    }

    void testConnectTimeout() {
        // A listener that never accepts, with its backlog full: further SYNs are dropped.
        asio::io_context io;
        asio::ip::tcp::acceptor a(io, asio::ip::tcp::v4());
        a.bind({asio::ip::make_address("127.0.0.1"), 0});
        a.listen(0);
        asio::ip::tcp::socket filler(io);
        filler.connect(a.local_endpoint());
        Client client(ClientOptions().setConnectTimeout(200ms));
        const auto start = std::chrono::steady_clock::now();
        auto r = get(send(client, Request("GET", "http://127.0.0.1:" + std::to_string(a.local_endpoint().port()))));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::connect_timeout), r.ec);
        CPPUNIT_ASSERT(std::chrono::steady_clock::now() - start >= 200ms);
    }

    void testRequestTimeout() {
        ScriptedServer server([](const std::string&, int, int) { return Reply{"", Reply::After::stall}; });
        Client client(ClientOptions().setRequestTimeout(200ms));
        auto r = get(send(client, Request("GET", server.url())));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::request_timeout), r.ec);
        // Per-request override.
        r = get(send(client, Request("GET", server.url()).setRequestTimeout(100ms)));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::request_timeout), r.ec);
    }

    void testIdleTimeout() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + ScriptedServer::chunk("line\n"),
                         Reply::After::stall};
        });
        Client client(ClientOptions().setIdleTimeout(200ms));
        std::atomic<int> lines{0};
        auto r = get(send(client, Request("GET", server.url()).setOnLine([&](std::string_view) {
            ++lines;
            return true;
        })));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::idle_timeout), r.ec);
        CPPUNIT_ASSERT_EQUAL(1, lines.load());
    }

    void testCancelBeforeConnect() {
        ScriptedServer server([](const std::string&, int, int) { return okReply("x"); });
        Client client;
        std::atomic<int> calls{0};
        for (int i = 0; i < 20; ++i) {
            dhtgate::http::RequestHandle h;
            auto f = send(client, Request("GET", server.url()), &calls, &h);
            CPPUNIT_ASSERT(h.active());
            h.cancel();
            CPPUNIT_ASSERT(!h.active());
        }
        drain(client, server);
        CPPUNIT_ASSERT_EQUAL(0, calls.load());
    }

    void testCancelMidBody() {
        ScriptedServer server([](const std::string& req, int, int) {
            if (req.find("/drain") != std::string::npos)
                return okReply("d");
            return Reply{"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial", Reply::After::stall};
        });
        Client client;
        std::atomic<int> calls{0};
        std::promise<void> gotHeaders;
        dhtgate::http::RequestHandle h;
        auto f = send(client, Request("GET", server.url()).setOnHeaders([&](const Response& r) {
            CPPUNIT_ASSERT_EQUAL(200u, r.status);
            gotHeaders.set_value();
            return true;
        }),
                      &calls, &h);
        CPPUNIT_ASSERT(gotHeaders.get_future().wait_for(15s) == std::future_status::ready);
        h.cancel();
        CPPUNIT_ASSERT(server.waitForClose(0, 15s));
        server.send(0, std::string(993, 'y'));
        drain(client, server);
        CPPUNIT_ASSERT_EQUAL(0, calls.load());
    }

    void testCancelMidStream() {
        ScriptedServer server([](const std::string& req, int, int) {
            if (req.find("/drain") != std::string::npos)
                return okReply("d");
            return Reply{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + ScriptedServer::chunk("1\n"),
                         Reply::After::stall};
        });
        Client client;
        std::atomic<int> calls{0};
        std::atomic<int> lines{0};
        std::promise<void> second;
        dhtgate::http::RequestHandle h;
        auto f = send(client, Request("GET", server.url("/listen")).setOnLine([&](std::string_view l) {
            if (++lines == 2) {
                h.cancel(); // from inside the callback, on the io thread
                second.set_value();
            }
            CPPUNIT_ASSERT(l == "1" || l == "2");
            return true;
        }),
                      &calls, &h);
        CPPUNIT_ASSERT(server.waitForRequests(1, 15s));
        // Two lines in one chunk: the second line cancels, the third must never be delivered.
        server.send(0, ScriptedServer::chunk("2\n3\n"));
        CPPUNIT_ASSERT(second.get_future().wait_for(15s) == std::future_status::ready);
        CPPUNIT_ASSERT(server.waitForClose(0, 15s));
        drain(client, server);
        CPPUNIT_ASSERT_EQUAL(2, lines.load());
        CPPUNIT_ASSERT_EQUAL(0, calls.load());
    }

    void testCallerOwnedIoContext() {
        ScriptedServer server([](const std::string&, int, int) { return okReply("own"); });
        asio::io_context io;
        Result result;
        int calls = 0;
        {
            Client client(io);
            client.send(Request("GET", server.url()), [&](std::error_code ec, Response r) {
                ++calls;
                result = {ec, std::move(r)};
            });
            CPPUNIT_ASSERT_EQUAL(0, calls); // nothing runs before the caller runs the io_context
            io.run_for(5s);
        }
        CPPUNIT_ASSERT_EQUAL(1, calls);
        CPPUNIT_ASSERT(!result.ec);
        CPPUNIT_ASSERT_EQUAL(std::string("own"), result.response.body);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientHttpTest);
