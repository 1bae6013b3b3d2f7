// Interoperability of the state file with the reference server (libopendht 2.4.12's
// DhtProxyServer, used here only as the reference peer): a file we write is loaded by the
// reference, which writes it back at destruction in its own layout, which we load again.
//
// The defines come first (before any opendht header) and must match how libopendht was built
// (Debian 2.4.12: jsoncpp and push notifications on, server identity off), since the reference
// class layout depends on them.
#define OPENDHT_JSONCPP 1
#define OPENDHT_PUSH_NOTIFICATIONS 1
#include "state/state_store.h"

#include <opendht/dht_proxy_server.h>
#include <opendht/dhtrunner.h>

#include "support/temp_dir.h"

#include <cppunit/extensions/HelperMacros.h>

#include <arpa/inet.h>
#include <netinet/in.h>

using namespace dhtgate;
using namespace dhtgate::state;

namespace {

std::shared_ptr<dht::Value> value(dht::Value::Id id, const std::string& data) {
    auto v = std::make_shared<dht::Value>(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    v->id = id;
    return v;
}

std::shared_ptr<dht::DhtRunner> loopbackNode() {
    auto runner = std::make_shared<dht::DhtRunner>();
    dht::DhtRunner::Config config;
    config.threaded = true;
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    config.bind4 = dht::SockAddr(reinterpret_cast<const sockaddr*>(&sin), sizeof(sin));
    runner->run(config, dht::DhtRunner::Context {});
    return runner;
}

const PermanentPutRecord* findPut(const PersistedState& s, dht::Value::Id id) {
    for (const auto& p : s.puts)
        if (p.value && p.value->id == id)
            return &p;
    return nullptr;
}

const PushListenerRecord* findListener(const PersistedState& s, const std::string& token, const std::string& cid) {
    for (const auto& l : s.listeners)
        if (l.token == token && l.client_id == cid)
            return &l;
    return nullptr;
}

} // namespace

class StateReferenceTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(StateReferenceTest);
    CPPUNIT_TEST(testRoundTripThroughReferenceServer);
    CPPUNIT_TEST_SUITE_END();

public:
    void testRoundTripThroughReferenceServer() {
        test::TempDir dir;
        std::string path = dir.file("proxy.state");
        auto now = unixNow();
        auto k1 = dht::InfoHash::get("key-1");
        auto k2 = dht::InfoHash::get("key-2");

        PersistedState in;
        auto typed = value(11, "push");
        typed->user_type = "text/plain";
        in.puts.push_back({k1, typed, now + 3600, "client-A", "sess-A", push::Platform::android, "tok-a", "top"});
        auto signedValue = value(12, "signed");
        signedValue->sign(dht::crypto::PrivateKey::generateEC());
        in.puts.push_back({k1, signedValue, now + 3700, "", "", push::Platform::none, "", ""});
        in.puts.push_back({k2, value(13, "none-with-token"), now + 3800, "client-D", "sess-D", push::Platform::none,
                           "tok-d", ""});
        in.listeners.push_back({"ios-token-9", k1, "client-B", now + 7200, "sessB", push::Platform::ios, "com.example.voip"});
        in.listeners.push_back({"ios-token-9", k1, "client-C", now + 7300, "sessC", push::Platform::ios, ""});
        in.listeners.push_back({"https://up.example/ep?x=1", k2, "client-U", now + 7400, "sessU",
                                push::Platform::unifiedpush, ""});
        std::string message;
        CPPUNIT_ASSERT_MESSAGE(message, !save(path, in, &message));

        auto node = loopbackNode();
        {
            dht::ProxyServerConfig config;
            config.port = 0;
            config.persistStatePath = path;
            dht::DhtProxyServer reference(node, config); // loads our file now, saves its own at destruction
        }
        node->join();

        auto out = load(path, now);
        CPPUNIT_ASSERT_MESSAGE(out.message, !out.error);
        CPPUNIT_ASSERT_EQUAL(0u, out.version); // rewritten by the reference: no "version"
        CPPUNIT_ASSERT_EQUAL(in.puts.size(), out.state.puts.size());
        CPPUNIT_ASSERT_EQUAL(in.listeners.size(), out.state.listeners.size());

        for (const auto& want : in.puts) {
            const auto* got = findPut(out.state, want.value->id);
            CPPUNIT_ASSERT(got);
            CPPUNIT_ASSERT(got->key == want.key);
            CPPUNIT_ASSERT(got->value->getPacked() == want.value->getPacked());
            // The reference keeps expiries on a steady clock: allow a second of conversion drift.
            CPPUNIT_ASSERT(std::abs(got->expiry - want.expiry) <= 1);
            CPPUNIT_ASSERT_EQUAL(want.client_id, got->client_id);
            CPPUNIT_ASSERT_EQUAL(want.session_id, got->session_id);
            CPPUNIT_ASSERT(got->platform == want.platform);
            CPPUNIT_ASSERT_EQUAL(want.topic, got->topic);
        }
        CPPUNIT_ASSERT_EQUAL(std::string("tok-a"), findPut(out.state, 11)->token);
        // The reference's quirk (spec §8): a put with platform none loses its token on save.
        CPPUNIT_ASSERT_EQUAL(std::string(), findPut(out.state, 13)->token);

        for (const auto& want : in.listeners) {
            const auto* got = findListener(out.state, want.token, want.client_id);
            CPPUNIT_ASSERT(got);
            CPPUNIT_ASSERT(got->key == want.key);
            CPPUNIT_ASSERT(std::abs(got->expiry - want.expiry) <= 1);
            CPPUNIT_ASSERT_EQUAL(want.session_id, got->session_id);
            CPPUNIT_ASSERT(got->platform == want.platform);
            CPPUNIT_ASSERT_EQUAL(want.topic, got->topic);
        }
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(StateReferenceTest);
