// ProxyClient against the reference proxy (Debian's dhtnode --proxyserver) in a child process.
#include "dhtgate/proxy_client.h"

#include "support/proxy_scenario.h"
#include "support/reference_proxy.h"

#include <cppunit/extensions/HelperMacros.h>

#include <random>

using namespace std::chrono_literals;
using namespace dhtgate;
using namespace dhtgate::test;

class ClientProxyReferenceTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientProxyReferenceTest);
    CPPUNIT_TEST(testScenario);
    CPPUNIT_TEST(testListenReopensAfterRestart);
    CPPUNIT_TEST_SUITE_END();

    std::unique_ptr<LoopbackPeer> peer_;
    std::unique_ptr<ReferenceProxy> proxy_;

public:
    void setUp() override {
        peer_ = std::make_unique<LoopbackPeer>();
        proxy_ = std::make_unique<ReferenceProxy>(*peer_);
    }
    void tearDown() override {
        proxy_.reset();
        peer_.reset();
    }

    void testScenario() { runProxyScenario(proxy_->url(), peer_->runner()); }

    void testListenReopensAfterRestart() {
        ProxyClient client(ProxyClientOptions().setUrl(proxy_->url()).setListenRetry(50ms, 400ms));
        const auto key = dht::InfoHash::get("dhtgate-restart-" + std::to_string(std::random_device{}()));
        CPPUNIT_ASSERT(peerPut(peer_->runner(), key, textValue("before restart")));
        ListenRecorder recorder;
        client.listen(key, recorder.callback());
        CPPUNIT_ASSERT(recorder.waitCount(1, 20s));

        // The proxy dies (stream dropped without a final chunk) and comes back on the same port.
        proxy_->restart();
        CPPUNIT_ASSERT(peerPut(peer_->runner(), key, textValue("after restart")));
        CPPUNIT_ASSERT(recorder.waitCount(2, 20s));
        // The re-opened stream re-sent the first value: it must not be reported twice.
        std::error_code ec;
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), get(client, key, ec).size());
        syncIo(client);
        auto events = recorder.events();
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), events.size());
        CPPUNIT_ASSERT_EQUAL(std::string("before restart"), events[0].data);
        CPPUNIT_ASSERT_EQUAL(std::string("after restart"), events[1].data);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientProxyReferenceTest);
