// http::Client over TLS against a scripted HTTPS server on loopback: trust, host names, opt-out.
#include "dhtgate/http_client.h"

#include "dhtgate/error.h"
#include "support/scripted_server.h"
#include "support/test_identities.h"
#include "tls/identity_bridge.h"

#include <cppunit/extensions/HelperMacros.h>

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

struct Pki {
    std::string caPem;
    ScriptedServer::Tls server;
};

Pki makePki(std::vector<std::string> dnsNames, std::vector<std::string> ips) {
    auto ca = dhtgate::test::makeCa("dhtgate test CA");
    dhtgate::test::LeafSpec spec;
    spec.dnsNames = std::move(dnsNames);
    spec.ipAddresses = std::move(ips);
    auto leaf = dhtgate::test::makeLeaf(ca, spec);
    dhtgate::tls::OpenSslIdentity id;
    CPPUNIT_ASSERT(dhtgate::tls::exportIdentity(leaf, id));
    dhtgate::tls::TrustAnchor anchor;
    CPPUNIT_ASSERT(dhtgate::tls::exportTrustAnchor(*ca.second, anchor));
    return {anchor.pem, {id.chainPem, id.keyPem}};
}

std::pair<std::error_code, Response> fetch(Client& client, const std::string& url) {
    std::promise<std::pair<std::error_code, Response>> p;
    auto f = p.get_future();
    client.send(Request("GET", url), [&](std::error_code ec, Response r) { p.set_value({ec, std::move(r)}); });
    CPPUNIT_ASSERT(f.wait_for(10s) == std::future_status::ready);
    return f.get();
}

Reply hello(const std::string&, int, int) {
    return {ScriptedServer::ok("secure"), Reply::After::keepReading};
}

} // namespace

class ClientHttpsTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(ClientHttpsTest);
    CPPUNIT_TEST(testPinnedCa);
    CPPUNIT_TEST(testUntrustedRejected);
    CPPUNIT_TEST(testHostNameMismatchRejected);
    CPPUNIT_TEST(testVerificationOptOut);
    CPPUNIT_TEST_SUITE_END();

public:
    void testPinnedCa() {
        auto pki = makePki({"localhost"}, {"127.0.0.1"});
        ScriptedServer server(hello, pki.server);
        Client client(ClientOptions().setCaPem(pki.caPem));
        // IP literal (IP SAN) then host name (DNS SAN, SNI); keep-alive works over TLS too.
        for (int i = 0; i < 3; ++i) {
            auto [ec, r] = fetch(client, server.url("/"));
            CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
            CPPUNIT_ASSERT_EQUAL(std::string("secure"), r.body);
        }
        CPPUNIT_ASSERT_EQUAL(1, server.acceptedConnections());
        auto [ec, r] = fetch(client, "https://localhost:" + std::to_string(server.port()) + "/");
        CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
        CPPUNIT_ASSERT_EQUAL(200u, r.status);
    }

    void testUntrustedRejected() {
        auto pki = makePki({"localhost"}, {"127.0.0.1"});
        ScriptedServer server(hello, pki.server);
        Client client; // system CA store: our test CA is not in it
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::tls_handshake_failed), fetch(client, server.url()).first);
        auto other = makePki({"localhost"}, {"127.0.0.1"});
        Client pinnedToOther(ClientOptions().setCaPem(other.caPem));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::tls_handshake_failed), fetch(pinnedToOther, server.url()).first);
        CPPUNIT_ASSERT_EQUAL(0, server.requestCount());
    }

    void testHostNameMismatchRejected() {
        auto pki = makePki({"proxy.example"}, {});
        ScriptedServer server(hello, pki.server);
        Client client(ClientOptions().setCaPem(pki.caPem));
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::tls_handshake_failed), fetch(client, server.url()).first);
        CPPUNIT_ASSERT_EQUAL(make_error_code(errc::tls_handshake_failed),
                             fetch(client, "https://localhost:" + std::to_string(server.port()) + "/").first);
    }

    void testVerificationOptOut() {
        auto pki = makePki({"proxy.example"}, {});
        ScriptedServer server(hello, pki.server);
        Client client(ClientOptions().setVerifyPeer(false));
        auto [ec, r] = fetch(client, server.url());
        CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
        CPPUNIT_ASSERT_EQUAL(std::string("secure"), r.body);
        // Bad PEM in the options is a construction-time error.
        CPPUNIT_ASSERT_THROW(Client(ClientOptions().setCaPem("not a certificate")), std::system_error);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ClientHttpsTest);
