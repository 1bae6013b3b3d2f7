// POST /key/:hash/sign and /encrypt with a server identity, checked by independent OpenDHT nodes:
// a plain node verifies the signature, the recipient's node (its identity in dht_config.id)
// decrypts the value.
#include "dhtgate/http_client.h"
#include "dhtgate/proxy_server.h"

#include "support/dht_node.h"
#include "support/wait.h"

#include <cppunit/extensions/HelperMacros.h>
#include <opendht/dhtrunner.h>
#include <opendht/securedht.h>

#include <future>

#include <arpa/inet.h>
#include <netinet/in.h>

using namespace std::chrono_literals;
using dhtgate::ProxyServer;
using dhtgate::ServerConfig;
using dhtgate::test::TestDhtNode;

namespace {

std::pair<int, std::string> post(const std::string& url, std::string body) {
    dhtgate::http::Client client;
    dhtgate::http::Request r("POST", url);
    r.body = std::move(body);
    std::promise<std::pair<int, std::string>> p;
    auto f = p.get_future();
    client.send(std::move(r), [&](std::error_code ec, dhtgate::http::Response resp) {
        p.set_value({ec ? 0 : resp.status, resp.body});
    });
    CPPUNIT_ASSERT(dhtgate::test::ready(f, 20s));
    return f.get();
}

std::vector<std::shared_ptr<dht::Value>> getFrom(dht::DhtRunner& node, const dht::InfoHash& key) {
    auto f = node.get(key);
    CPPUNIT_ASSERT(dhtgate::test::ready(f, 20s));
    return f.get();
}

} // namespace

class HttpsSignTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(HttpsSignTest);
    CPPUNIT_TEST(testSignAndEncrypt);
    CPPUNIT_TEST(testWithoutIdentity);
    CPPUNIT_TEST_SUITE_END();

public:
    void testSignAndEncrypt() {
        // RSA: 2.x nodes check value signatures as RSA-SHA512 only (docs/tls.md).
        auto serverId = dht::crypto::generateIdentity("proxy", {}, 2048);
        auto recipientId = dht::crypto::generateIdentity("recipient", {}, 2048);
        TestDhtNode node;
        TestDhtNode checker; // independent, no identity
        checker->forwardAllMessages(true); // also report values it cannot decrypt
        checker.bootstrapTo(node);
        // The recipient publishes its certificate (SecureDht does so at start-up).
        auto recipient = std::make_shared<dht::DhtRunner>();
        dht::DhtRunner::Config rc;
        rc.threaded = true;
        rc.dht_config.id = recipientId;
        sockaddr_in sin {};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc.bind4 = dht::SockAddr(reinterpret_cast<const sockaddr*>(&sin), sizeof(sin));
        recipient->run(rc, dht::DhtRunner::Context {});
        recipient->bootstrap("127.0.0.1", std::to_string(node.port()));
        std::promise<bool> certP;
        auto certF = certP.get_future();
        recipient->put(recipientId.second->getId(), dht::Value(dht::CERTIFICATE_TYPE, *recipientId.second, 1),
                       [&](bool ok) { certP.set_value(ok); });
        CPPUNIT_ASSERT(dhtgate::test::ready(certF, 20s));
        CPPUNIT_ASSERT(checker.waitConnected());

        ServerConfig c;
        c.port = 0;
        c.identity = std::make_shared<dht::crypto::Identity>(serverId);
        ProxyServer server(node.runner(), c);
        CPPUNIT_ASSERT(!server.start());
        const auto base = "http://127.0.0.1:" + std::to_string(server.port()) + "/key/";
        const auto key = dht::InfoHash::get("https-sign");

        auto [status, body] = post(base + key.toString() + "/sign", R"({"id":"7","data":"c2lnbmVk"})");
        CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 200, status);
        CPPUNIT_ASSERT(body.find("\"sig\"") != std::string::npos);
        auto values = getFrom(*checker.runner(), key);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), values.size());
        CPPUNIT_ASSERT(values[0]->owner);
        CPPUNIT_ASSERT_EQUAL(serverId.second->getId(), values[0]->owner->getId());
        CPPUNIT_ASSERT(values[0]->checkSignature());
        CPPUNIT_ASSERT(values[0]->data == dht::Blob({'s', 'i', 'g', 'n', 'e', 'd'}));
        const auto firstSeq = values[0]->seq;
        // signing the same id again raises seq above the stored one
        std::tie(status, body) = post(base + key.toString() + "/sign", R"({"id":"7","data":"YWdhaW4="})");
        CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 200, status);
        CPPUNIT_ASSERT(body.find("\"seq\":" + std::to_string(firstSeq + 1)) != std::string::npos);

        const auto ekey = dht::InfoHash::get("https-encrypt");
        std::tie(status, body) = post(base + ekey.toString() + "/encrypt", R"({"data":"c2VjcmV0"})");
        CPPUNIT_ASSERT_EQUAL(400, status);
        CPPUNIT_ASSERT(body.find("No destination found") != std::string::npos);
        std::tie(status, body) = post(base + ekey.toString() + "/encrypt",
                                      R"({"id":"9","data":"c2VjcmV0","to":")" + recipientId.second->getId().toString() + "\"}");
        CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 200, status);
        CPPUNIT_ASSERT(body.find("c2VjcmV0") != std::string::npos); // the cleartext is echoed
        // a plain node sees only the cypher; the recipient decrypts it
        auto raw = getFrom(*checker.runner(), ekey);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), raw.size());
        CPPUNIT_ASSERT(raw[0]->isEncrypted());
        auto clear = raw[0]->decrypt(*recipientId.first);
        CPPUNIT_ASSERT(clear);
        CPPUNIT_ASSERT(clear->data == dht::Blob({'s', 'e', 'c', 'r', 'e', 't'}));
        CPPUNIT_ASSERT_EQUAL(serverId.second->getId(), clear->owner->getId());
        auto viaRecipient = getFrom(*recipient, ekey);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), viaRecipient.size());
        CPPUNIT_ASSERT(viaRecipient[0]->data == clear->data);
        recipient->join();
    }

    void testWithoutIdentity() {
        TestDhtNode node;
        ServerConfig c;
        c.port = 0;
        ProxyServer server(node.runner(), c);
        CPPUNIT_ASSERT(!server.start());
        const auto key = dht::InfoHash::get("x").toString();
        auto [status, body] = post("http://127.0.0.1:" + std::to_string(server.port()) + "/key/" + key + "/sign",
                                   R"({"data":"eA=="})");
        CPPUNIT_ASSERT_EQUAL(501, status);
        CPPUNIT_ASSERT(body.find("no identity") != std::string::npos);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(HttpsSignTest);
