// ProxyClient against dhtgate's own in-process ProxyServer: the same scenario as the reference.
#include "dhtgate/proxy_client.h"

#include "dhtgate/proxy_server.h"
#include "support/dht_node.h"
#include "support/proxy_scenario.h"
#include "support/test_proxy.h"

#include <cppunit/extensions/HelperMacros.h>

#include <random>

using namespace std::chrono_literals;
using namespace dhtgate;
using namespace dhtgate::test;

class ClientProxyDhtgateTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientProxyDhtgateTest);
    CPPUNIT_TEST(testScenario);
    CPPUNIT_TEST(testListenReopensAfterRestart);
    CPPUNIT_TEST_SUITE_END();

    std::unique_ptr<TestDhtNode> peer_;
    std::unique_ptr<TestDhtNode> node_;
    std::unique_ptr<ProxyServer> server_;

    void startServer(std::uint16_t port) {
        auto config = TestProxy::testConfig();
        config.port = port;
        server_ = std::make_unique<ProxyServer>(node_->runner(), config);
        auto ec = server_->start();
        CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

public:
    void setUp() override {
        peer_ = std::make_unique<TestDhtNode>();
        node_ = std::make_unique<TestDhtNode>();
        node_->bootstrapTo(*peer_);
        CPPUNIT_ASSERT(node_->waitConnected(10s));
        startServer(0);
    }
    void tearDown() override {
        server_.reset();
        node_.reset();
        peer_.reset();
    }

    void testScenario() { runProxyScenario(url(), *peer_->runner()); }

    void testListenReopensAfterRestart() {
        ProxyClient client(ProxyClientOptions().setUrl(url()).setListenRetry(20ms, 200ms));
        const auto key = dht::InfoHash::get("dhtgate-restart-" + std::to_string(std::random_device{}()));
        CPPUNIT_ASSERT(peerPut(*peer_->runner(), key, textValue("before restart")));
        ListenRecorder recorder;
        client.listen(key, recorder.callback());
        CPPUNIT_ASSERT(recorder.waitCount(1, 20s));

        const auto port = server_->port();
        server_->stop();
        server_.reset();
        startServer(port);
        CPPUNIT_ASSERT(peerPut(*peer_->runner(), key, textValue("after restart")));
        CPPUNIT_ASSERT(recorder.waitCount(2, 20s));
        std::error_code ec;
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), get(client, key, ec).size());
        syncIo(client);
        auto events = recorder.events();
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), events.size());
        CPPUNIT_ASSERT_EQUAL(std::string("before restart"), events[0].data);
        CPPUNIT_ASSERT_EQUAL(std::string("after restart"), events[1].data);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientProxyDhtgateTest);
