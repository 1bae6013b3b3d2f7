// ProxyServer over HTTPS (ServerConfig::identity + https_port): round trips with dhtgate's
// ProxyClient and OpenDHT 2.x's proxy client pinned to a test CA, rejection of untrusted
// certificates and wrong host names, relaying of client-encrypted/-signed values untouched.
#include "dhtgate/proxy_client.h"
#include "dhtgate/proxy_server.h"

#include "support/dht_node.h"
#include "support/test_identities.h"
#include "support/wait.h"
#include "tls/identity_bridge.h"

#include <cppunit/extensions/HelperMacros.h>
#include <opendht/dhtrunner.h>

#include <future>
#include <mutex>
#include <set>

using namespace std::chrono_literals;
using dhtgate::ProxyClient;
using dhtgate::ProxyClientOptions;
using dhtgate::ProxyServer;
using dhtgate::ServerConfig;
using dhtgate::test::TestDhtNode;

namespace {

std::string pem(const dht::crypto::Certificate& cert) {
    dhtgate::tls::TrustAnchor a;
    CPPUNIT_ASSERT(dhtgate::tls::exportTrustAnchor(cert, a));
    return a.pem;
}

dht::crypto::Identity serverLeaf(const dht::crypto::Identity& ca, std::vector<std::string> dns,
                                 std::vector<std::string> ips) {
    dhtgate::test::LeafSpec spec;
    spec.dnsNames = std::move(dns);
    spec.ipAddresses = std::move(ips);
    return dhtgate::test::makeLeaf(ca, spec);
}

std::unique_ptr<ProxyServer> startHttps(TestDhtNode& node, const dht::crypto::Identity& id) {
    ServerConfig c;
    c.port = 0;
    c.https_port = 0;
    c.identity = std::make_shared<dht::crypto::Identity>(id);
    auto server = std::make_unique<ProxyServer>(node.runner(), c);
    CPPUNIT_ASSERT(!server->start());
    CPPUNIT_ASSERT(server->httpsPort() != 0);
    CPPUNIT_ASSERT(server->port() != 0);
    return server;
}

std::unique_ptr<ProxyClient> client(const std::string& url, const std::string& caPem) {
    ProxyClientOptions o;
    o.url = url;
    o.http.caPem = caPem;
    o.requestTimeout = 10s;
    return std::make_unique<ProxyClient>(o);
}

std::pair<std::error_code, ProxyClient::Values> get(ProxyClient& c, const dht::InfoHash& key) {
    std::promise<std::pair<std::error_code, ProxyClient::Values>> p;
    auto f = p.get_future();
    c.get(key, [&](std::error_code ec, ProxyClient::Values v) { p.set_value({ec, std::move(v)}); });
    CPPUNIT_ASSERT(dhtgate::test::ready(f, 15s));
    return f.get();
}

std::error_code put(ProxyClient& c, const dht::InfoHash& key, std::shared_ptr<dht::Value> v) {
    std::promise<std::error_code> p;
    auto f = p.get_future();
    c.put(key, std::move(v), [&](std::error_code ec, std::shared_ptr<dht::Value>) { p.set_value(ec); });
    CPPUNIT_ASSERT(dhtgate::test::ready(f, 15s));
    return f.get();
}

} // namespace

class HttpsServerTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(HttpsServerTest);
    CPPUNIT_TEST(testRoundTrip);
    CPPUNIT_TEST(testUntrustedAndWrongHostRejected);
    CPPUNIT_TEST(testReferenceClientOverHttps);
    CPPUNIT_TEST(testEncryptedAndSignedRelayedUntouched);
    CPPUNIT_TEST(testHttpsRequiresIdentity);
    CPPUNIT_TEST_SUITE_END();

public:
    void setUp() override {
        ca_ = dhtgate::test::makeCa("https test CA");
        leaf_ = serverLeaf(ca_, {"localhost"}, {"127.0.0.1"});
    }

    void testRoundTrip() {
        TestDhtNode node;
        auto server = startHttps(node, leaf_);
        auto c = client("https://127.0.0.1:" + std::to_string(server->httpsPort()), pem(*ca_.second));
        const auto key = dht::InfoHash::get("https-round-trip");

        // node info over TLS shows the identity's public-key id
        std::promise<dhtgate::NodeInfo> infoP;
        auto infoF = infoP.get_future();
        c->nodeInfo([&](std::error_code ec, dhtgate::NodeInfo i) {
            if (ec)
                i.id = "error: " + ec.message();
            infoP.set_value(i);
        });
        CPPUNIT_ASSERT(dhtgate::test::ready(infoF, 15s));
        CPPUNIT_ASSERT_EQUAL(leaf_.second->getId().toString(), infoF.get().id);

        std::promise<std::string> heard;
        auto heardF = heard.get_future();
        auto once = std::make_shared<std::once_flag>();
        c->listen(key, [&, once](const ProxyClient::Values& vs, bool expired) {
            for (const auto& v : vs)
                if (!expired && v->id == 42)
                    std::call_once(*once, [&] { heard.set_value(std::string(v->data.begin(), v->data.end())); });
            return true;
        });
        auto v = std::make_shared<dht::Value>(dht::Blob {'t', 'l', 's'});
        v->id = 42;
        CPPUNIT_ASSERT(!put(*c, key, v));
        auto [ec, values] = get(*c, key);
        CPPUNIT_ASSERT(!ec);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), values.size());
        CPPUNIT_ASSERT(values[0]->data == v->data);
        CPPUNIT_ASSERT(dhtgate::test::ready(heardF, 15s));
        CPPUNIT_ASSERT_EQUAL(std::string("tls"), heardF.get());

        // the plain port keeps serving the same DHT
        auto plain = client("http://127.0.0.1:" + std::to_string(server->port()), {});
        auto [ec2, values2] = get(*plain, key);
        CPPUNIT_ASSERT(!ec2);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), values2.size());
    }

    void testUntrustedAndWrongHostRejected() {
        TestDhtNode node;
        auto server = startHttps(node, leaf_);
        const auto key = dht::InfoHash::get("https-untrusted");
        auto other = dhtgate::test::makeCa("other CA");
        auto untrusted = client("https://127.0.0.1:" + std::to_string(server->httpsPort()), pem(*other.second));
        CPPUNIT_ASSERT(get(*untrusted, key).first);

        // a certificate for another name
        auto wrong = serverLeaf(ca_, {"elsewhere.example"}, {"10.1.2.3"});
        auto server2 = startHttps(node, wrong);
        auto misnamed = client("https://127.0.0.1:" + std::to_string(server2->httpsPort()), pem(*ca_.second));
        CPPUNIT_ASSERT(get(*misnamed, key).first);
        // the right CA and name work on the first server
        auto good = client("https://127.0.0.1:" + std::to_string(server->httpsPort()), pem(*ca_.second));
        CPPUNIT_ASSERT(!get(*good, key).first);
    }

    void testReferenceClientOverHttps() {
        TestDhtNode node;
        auto server = startHttps(node, leaf_);
        auto ref = std::make_shared<dht::DhtRunner>();
        dht::DhtRunner::Config config;
        config.threaded = true;
        config.proxy_server = "https://127.0.0.1:" + std::to_string(server->httpsPort());
        config.server_ca = ca_.second;
        ref->run(config, dht::DhtRunner::Context {});
        const auto key = dht::InfoHash::get("https-reference");

        std::promise<bool> putP;
        auto putF = putP.get_future();
        ref->put(key, dht::Value(dht::Blob {'r', 'e', 'f'}), [&](bool ok) { putP.set_value(ok); });
        CPPUNIT_ASSERT(dhtgate::test::ready(putF, 20s));
        CPPUNIT_ASSERT(putF.get());

        auto values = ref->get(key);
        CPPUNIT_ASSERT(dhtgate::test::ready(values, 20s));
        const auto got = values.get();
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), got.size());
        CPPUNIT_ASSERT(got[0]->data == dht::Blob({'r', 'e', 'f'}));
        ref->join();
    }

    void testEncryptedAndSignedRelayedUntouched() {
        TestDhtNode node;
        auto server = startHttps(node, leaf_);
        auto c = client("https://127.0.0.1:" + std::to_string(server->httpsPort()), pem(*ca_.second));
        const auto key = dht::InfoHash::get("https-relay");
        auto author = dht::crypto::generateIdentity("author", {}, 2048); // 2.x verifies RSA signatures only
        auto recipient = dht::crypto::generateIdentity("recipient", {}, 2048);

        auto signedValue = std::make_shared<dht::Value>(dht::Blob {'s'});
        signedValue->id = 1;
        signedValue->sign(*author.first);
        dht::Value clear(dht::Blob {'e'});
        clear.id = 2;
        auto encrypted = std::make_shared<dht::Value>(clear.encrypt(*author.first, recipient.second->getPublicKey()));

        std::promise<void> heard;
        auto heardF = heard.get_future();
        auto seen = std::make_shared<std::set<dht::Value::Id>>();
        c->listen(key, [&, seen](const ProxyClient::Values& vs, bool expired) {
            for (const auto& v : vs)
                if (!expired && (v->id == 1 || v->id == 2) && seen->insert(v->id).second && seen->size() == 2)
                    heard.set_value();
            return true;
        });
        CPPUNIT_ASSERT(!put(*c, key, signedValue));
        CPPUNIT_ASSERT(!put(*c, key, encrypted));
        auto [ec, values] = get(*c, key);
        CPPUNIT_ASSERT(!ec);
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), values.size());
        for (const auto& v : values) {
            if (v->id == 1) {
                CPPUNIT_ASSERT(v->signature == signedValue->signature);
                CPPUNIT_ASSERT(v->checkSignature());
            } else {
                CPPUNIT_ASSERT(v->cypher == encrypted->cypher);
                auto dv = v->decrypt(*recipient.first);
                CPPUNIT_ASSERT(dv);
                CPPUNIT_ASSERT(dv->data == dht::Blob({'e'}));
            }
        }
        CPPUNIT_ASSERT(dhtgate::test::ready(heardF, 15s));
    }

    void testHttpsRequiresIdentity() {
        TestDhtNode node;
        ServerConfig c;
        c.port = 0;
        c.https_port = 0;
        ProxyServer server(node.runner(), c);
        CPPUNIT_ASSERT(server.start() == dhtgate::make_error_code(dhtgate::errc::invalid_config));
    }

private:
    dht::crypto::Identity ca_, leaf_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(HttpsServerTest);
