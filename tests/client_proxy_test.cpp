// ProxyClient protocol details against a scripted loopback server (exact bytes, no DHT).
#include "dhtgate/proxy_client.h"

#include "dhtgate/error.h"
#include "support/proxy_scenario.h"
#include "support/scripted_server.h"

#include <cppunit/extensions/HelperMacros.h>

#include <future>

using namespace std::chrono_literals;
using namespace dhtgate;
using namespace dhtgate::test;

namespace {

const dht::InfoHash kKey = dht::InfoHash::get("scripted");
const std::string kListenHead =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

std::string valueLine(const std::string& id, const std::string& base64, bool expired = false) {
    return "{\"data\":\"" + base64 + "\"," + (expired ? "\"expired\":true," : "") + "\"id\":\"" + id +
           "\",\"type\":0}\n";
}

} // namespace

class ClientProxyTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientProxyTest);
    CPPUNIT_TEST(testRequestsOnTheWire);
    CPPUNIT_TEST(testStatusAndBodyErrors);
    CPPUNIT_TEST(testGetDeduplicatesAndFilters);
    CPPUNIT_TEST(testPermanentPutIsRefreshed);
    CPPUNIT_TEST(testListenDedupAcrossReconnect);
    CPPUNIT_TEST(testBadUrlThrows);
    CPPUNIT_TEST_SUITE_END();

public:
    void testRequestsOnTheWire() {
        ScriptedServer server([](const std::string& req, int, int) {
            if (req.compare(0, 5, "POST ") == 0)
                return Reply{ScriptedServer::ok(valueLine("77", "aGk=")), Reply::After::keepReading};
            return Reply{ScriptedServer::ok("{\"ipv4\":{\"good\":2},\"node_id\":\"" + std::string(40, 'a') + "\"}\n"),
                         Reply::After::keepReading};
        });
        ProxyClient client(ProxyClientOptions().setUrl(server.url("/some/base")));
        std::error_code ec;
        auto info = nodeInfo(client, ec);
        CPPUNIT_ASSERT(!ec && info.connected());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), info.ipv4.good);
        auto stored = put(client, kKey, textValue("hi"), ec);
        CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(77), stored->id);
        auto reqs = server.requests();
        // Node info uses the URL's path; key routes start at the root (spec §10.1).
        CPPUNIT_ASSERT_EQUAL(0u, unsigned(reqs[0].find("GET /some/base HTTP/1.1\r\n")));
        CPPUNIT_ASSERT_EQUAL(0u, unsigned(reqs[1].find("POST /key/" + kKey.toString() + " HTTP/1.1\r\n")));
        CPPUNIT_ASSERT(reqs[1].find("Content-Type: application/json\r\n") != std::string::npos);
        CPPUNIT_ASSERT(reqs[1].find("{\"data\":\"aGk=\",\"id\":\"0\",\"type\":0}") != std::string::npos);
        CPPUNIT_ASSERT_EQUAL(1, server.acceptedConnections());
    }

    void testStatusAndBodyErrors() {
        ScriptedServer server([](const std::string& req, int, int) {
            if (req.compare(0, 5, "POST ") == 0)
                return Reply{"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 20\r\n\r\n{\"err\":\"Put failed\"}",
                             Reply::After::keepReading};
            if (req.find("/node/stats") != std::string::npos)
                return Reply{ScriptedServer::ok("[1,2]\n"), Reply::After::keepReading};
            return Reply{ScriptedServer::ok("{\"ipv4\":{}}\n"), Reply::After::keepReading};
        });
        ProxyClient client(ProxyClientOptions().setUrl(server.url()));
        std::error_code ec;
        put(client, kKey, textValue("x"), ec);
        CPPUNIT_ASSERT_EQUAL(http::statusError(502), ec);
        CPPUNIT_ASSERT(ec.message().find("502") != std::string::npos);
        nodeInfo(client, ec);
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::bad_response), ec);
        std::promise<std::error_code> p;
        client.stats([&](std::error_code e, ProxyStats) { p.set_value(e); });
        auto f = p.get_future();
        CPPUNIT_ASSERT(f.wait_for(15s) == std::future_status::ready);
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::bad_response), f.get());
    }

    void testGetDeduplicatesAndFilters() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{kListenHead + ScriptedServer::chunk(valueLine("1", "YQ==") + valueLine("2", "Yg==")) +
                             ScriptedServer::chunk(valueLine("1", "YQ==") + "garbage\n") + "0\r\n\r\n",
                         Reply::After::keepReading};
        });
        ProxyClient client(ProxyClientOptions().setUrl(server.url()));
        std::error_code ec;
        auto values = get(client, kKey, ec);
        CPPUNIT_ASSERT(!ec);
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), values.size());
        CPPUNIT_ASSERT_EQUAL(std::string("a"), text(*values[0]));
        std::promise<ProxyClient::Values> p;
        client.get(kKey, dht::Value::Id(2), [&](std::error_code, ProxyClient::Values v) { p.set_value(v); });
        auto f = p.get_future();
        CPPUNIT_ASSERT(f.wait_for(15s) == std::future_status::ready);
        auto byId = f.get();
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), byId.size());
        CPPUNIT_ASSERT_EQUAL(std::string("b"), text(*byId[0]));
    }

    void testPermanentPutIsRefreshed() {
        ScriptedServer server([](const std::string&, int, int) {
            return Reply{ScriptedServer::ok(valueLine("4242", "cA==")), Reply::After::keepReading};
        });
        ProxyClient client(ProxyClientOptions().setUrl(server.url()).setPermanentRefresh(50ms));
        std::error_code ec;
        auto stored = put(client, kKey, textValue("p"), ec, true);
        CPPUNIT_ASSERT(!ec);
        CPPUNIT_ASSERT(server.waitForRequests(3, 5s));
        client.cancelPut(kKey, stored->id);
        auto reqs = server.requests();
        CPPUNIT_ASSERT(reqs[0].find("\"id\":\"0\"") != std::string::npos);
        CPPUNIT_ASSERT(reqs[0].find("\"permanent\":true}") != std::string::npos);
        // Refreshes re-post the same value with the id the proxy chose.
        for (std::size_t i = 1; i < 3; ++i) {
            CPPUNIT_ASSERT(reqs[i].find("\"id\":\"4242\"") != std::string::npos);
            CPPUNIT_ASSERT(reqs[i].find("\"permanent\":true") != std::string::npos);
        }
    }

    void testListenDedupAcrossReconnect() {
        // Connection 0: A and B, then the server drops the stream. Connection 1 re-sends A and B
        // unchanged, an edited B, a new C, then A expires.
        ScriptedServer server([](const std::string&, int conn, int) {
            if (conn == 0)
                return Reply{kListenHead + ScriptedServer::chunk(valueLine("1", "QQ==")) +
                                 ScriptedServer::chunk(valueLine("2", "Qg==")),
                             Reply::After::close};
            return Reply{kListenHead + ScriptedServer::chunk(valueLine("1", "QQ==")) +
                             ScriptedServer::chunk(valueLine("2", "Qg==")) + ScriptedServer::chunk("{}\n") +
                             ScriptedServer::chunk(valueLine("2", "QjI=")) +
                             ScriptedServer::chunk(valueLine("3", "Qw==")) +
                             ScriptedServer::chunk(valueLine("1", "QQ==", true)) +
                             ScriptedServer::chunk(valueLine("9", "Wg==", true)),
                         Reply::After::stall};
        });
        ProxyClient client(ProxyClientOptions().setUrl(server.url()).setListenRetry(10ms, 100ms));
        ListenRecorder recorder;
        client.listen(kKey, recorder.callback());
        CPPUNIT_ASSERT(recorder.waitCount(5, 5s));
        CPPUNIT_ASSERT(server.waitForRequests(2, 5s));
        syncIo(client);
        auto events = recorder.events();
        CPPUNIT_ASSERT_EQUAL(std::size_t(5), events.size());
        const char* expected[] = {"A", "B", "B2", "C", "A"};
        for (std::size_t i = 0; i < 5; ++i)
            CPPUNIT_ASSERT_EQUAL(std::string(expected[i]), events[i].data);
        CPPUNIT_ASSERT(!events[3].expired && events[4].expired);
        CPPUNIT_ASSERT(server.requests()[1].find("GET /key/" + kKey.toString() + "/listen HTTP/1.1") == 0);
    }

    void testBadUrlThrows() {
        CPPUNIT_ASSERT_THROW(ProxyClient(ProxyClientOptions().setUrl("ftp://x")), std::system_error);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientProxyTest);
