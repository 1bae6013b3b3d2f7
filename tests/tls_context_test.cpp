#include "tls/tls_context.h"

#include "support/test_identities.h"
#include "tls/identity_bridge.h"

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/stream.hpp>
#include <cppunit/extensions/HelperMacros.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

using asio::ip::tcp;
using dhtgate::tls::ClientTlsOptions;
using dhtgate::tls::ServerTlsOptions;

namespace {

struct Handshake {
    bool serverDone{false}, clientDone{false};
    std::error_code server, client;
    std::string clientCertSeenByServer; ///< CN of the client certificate, if any
    std::string clientReason;           ///< verifyFailureReason on the client side
    int version{0};
};

// One TLS handshake over loopback between a server and a client stream built from the given
// contexts. The io_context runs on this thread for at most 10 s: both sides finish long before.
Handshake handshake(asio::ssl::context& serverCtx, asio::ssl::context& clientCtx, const std::string& host,
                    const std::string& connectTo = "127.0.0.1") {
    Handshake r;
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address(connectTo), 0));
    asio::ssl::stream<tcp::socket> server(io, serverCtx), client(io, clientCtx);
    // Once both sides are done, closing both sockets leaves the io_context without work.
    auto finish = [&] {
        if (r.serverDone && r.clientDone) {
            server.lowest_layer().close();
            client.lowest_layer().close();
        }
    };

    acceptor.async_accept(server.lowest_layer(), [&](std::error_code ec) {
        if (ec) {
            r.server = ec;
            r.serverDone = true;
            return finish();
        }
        server.async_handshake(asio::ssl::stream_base::server, [&](std::error_code hec) {
            r.server = hec;
            r.serverDone = true;
            if (X509* peer = SSL_get1_peer_certificate(server.native_handle())) {
                char cn[256] = {};
                X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof(cn));
                r.clientCertSeenByServer = cn;
                X509_free(peer);
            }
            finish();
        });
    });
    auto prep = dhtgate::tls::prepareClientSession(client.native_handle(), host);
    CPPUNIT_ASSERT_MESSAGE(prep.message, bool(prep));
    client.lowest_layer().async_connect(acceptor.local_endpoint(), [&](std::error_code ec) {
        if (ec) {
            r.client = ec;
            r.clientDone = true;
            return finish();
        }
        client.async_handshake(asio::ssl::stream_base::client, [&](std::error_code hec) {
            r.client = hec;
            r.clientDone = true;
            r.clientReason = dhtgate::tls::verifyFailureReason(client.native_handle());
            r.version = SSL_version(client.native_handle());
            finish();
        });
    });
    io.run_for(std::chrono::seconds(10));
    CPPUNIT_ASSERT_MESSAGE("handshake did not finish in time", r.serverDone && r.clientDone);
    return r;
}

asio::ssl::context serverContext(const dht::crypto::Identity& id, ServerTlsOptions opts = {}) {
    opts.identity = id;
    std::optional<asio::ssl::context> ctx;
    auto st = dhtgate::tls::makeServerContext(opts, ctx);
    CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
    return std::move(*ctx);
}

asio::ssl::context clientContext(const ClientTlsOptions& opts) {
    std::optional<asio::ssl::context> ctx;
    auto st = dhtgate::tls::makeClientContext(opts, ctx);
    CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
    return std::move(*ctx);
}

ClientTlsOptions pinning(const dht::crypto::Identity& ca) {
    ClientTlsOptions o;
    o.trusted = {ca.second};
    return o;
}

dhtgate::test::LeafSpec localhostSpec(const std::string& cn = "server") {
    dhtgate::test::LeafSpec s;
    s.commonName = cn;
    s.dnsNames = {"localhost"};
    s.ipAddresses = {"127.0.0.1", "::1"};
    return s;
}

} // namespace

class TlsContextTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TlsContextTest);
    CPPUNIT_TEST(testPinnedCaSucceeds);
    CPPUNIT_TEST(testIpLiteralHosts);
    CPPUNIT_TEST(testUntrustedRejected);
    CPPUNIT_TEST(testSystemStoreRejectsPrivateCa);
    CPPUNIT_TEST(testWrongHostRejected);
    CPPUNIT_TEST(testExpiredRejected);
    CPPUNIT_TEST(testClientCertificate);
    CPPUNIT_TEST(testClientCertificateRequired);
    CPPUNIT_TEST(testInsecureOptIn);
    CPPUNIT_TEST(testPinnedSelfSignedIdentity);
    CPPUNIT_TEST(testPinnedOpenDhtIdentity);
    CPPUNIT_TEST(testSelfSignedCaIdentity);
    CPPUNIT_TEST(testTrustedFile);
    CPPUNIT_TEST(testCaRootFileEnvironment);
    CPPUNIT_TEST(testPemOptions);
    CPPUNIT_TEST(testBadOptions);
    CPPUNIT_TEST_SUITE_END();

    dht::crypto::Identity ca_;
    dht::crypto::Identity server_;

public:
    void setUp() override {
        ca_ = dhtgate::test::makeCa("test-ca");
        server_ = dhtgate::test::makeLeaf(ca_, localhostSpec());
    }

    void testPinnedCaSucceeds() {
        auto s = serverContext(server_);
        auto c = clientContext(pinning(ca_));
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT_MESSAGE(r.client.message(), !r.client);
        CPPUNIT_ASSERT_MESSAGE(r.server.message(), !r.server);
        CPPUNIT_ASSERT_EQUAL(std::string(), r.clientReason);
        CPPUNIT_ASSERT(r.version >= TLS1_2_VERSION);
        CPPUNIT_ASSERT_EQUAL(std::string(), r.clientCertSeenByServer); // never requested by default
        CPPUNIT_ASSERT_EQUAL(long(TLS1_2_VERSION), SSL_CTX_get_min_proto_version(s.native_handle()));
        CPPUNIT_ASSERT(SSL_CTX_get_options(s.native_handle()) & SSL_OP_NO_RENEGOTIATION);
    }

    void testIpLiteralHosts() {
        auto s = serverContext(server_);
        auto c = clientContext(pinning(ca_));
        auto r4 = handshake(s, c, "127.0.0.1");
        CPPUNIT_ASSERT_MESSAGE(r4.client.message() + " " + r4.clientReason, !r4.client);
        auto r6 = handshake(s, c, "[::1]", "::1");
        CPPUNIT_ASSERT_MESSAGE(r6.client.message() + " " + r6.clientReason, !r6.client);
        // The certificate names 127.0.0.1, not 127.0.0.2.
        auto bad = handshake(s, c, "127.0.0.2");
        CPPUNIT_ASSERT(bad.client);
        CPPUNIT_ASSERT_EQUAL(std::string("IP address mismatch"), bad.clientReason);
    }

    void testUntrustedRejected() {
        auto other = dhtgate::test::makeCa("other-ca");
        auto s = serverContext(server_);
        auto c = clientContext(pinning(other));
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT(r.client);
        CPPUNIT_ASSERT(r.server); // the server sees the client's alert
        // The server sends its chain up to its (unknown) self-signed CA.
        CPPUNIT_ASSERT_EQUAL(std::string("self-signed certificate in certificate chain"), r.clientReason);
    }

    void testSystemStoreRejectsPrivateCa() {
        auto s = serverContext(server_);
        auto c = clientContext(ClientTlsOptions{}); // default: system CAs, verification on
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT(r.client);
        CPPUNIT_ASSERT(!r.clientReason.empty());
    }

    void testWrongHostRejected() {
        auto s = serverContext(server_);
        auto c = clientContext(pinning(ca_));
        auto r = handshake(s, c, "example.org");
        CPPUNIT_ASSERT(r.client);
        CPPUNIT_ASSERT_EQUAL(std::string("hostname mismatch"), r.clientReason);
    }

    void testExpiredRejected() {
        auto spec = localhostSpec();
        spec.notBefore = -std::chrono::hours(48);
        spec.notAfter = -std::chrono::hours(24);
        auto expired = dhtgate::test::makeLeaf(ca_, spec);
        auto s = serverContext(expired);
        auto c = clientContext(pinning(ca_));
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT(r.client);
        CPPUNIT_ASSERT_EQUAL(std::string("certificate has expired"), r.clientReason);
    }

    void testClientCertificate() {
        ServerTlsOptions so;
        so.clientCas = {ca_.second};
        so.requireClientCertificate = true;
        auto s = serverContext(server_, so);
        auto co = pinning(ca_);
        co.clientIdentity = dhtgate::test::makeLeaf(ca_, localhostSpec("client-7"));
        auto c = clientContext(co);
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT_MESSAGE(r.client.message(), !r.client);
        CPPUNIT_ASSERT_MESSAGE(r.server.message(), !r.server);
        CPPUNIT_ASSERT_EQUAL(std::string("client-7"), r.clientCertSeenByServer);
    }

    void testClientCertificateRequired() {
        ServerTlsOptions so;
        so.clientCas = {ca_.second};
        so.requireClientCertificate = true;
        auto s = serverContext(server_, so);
        auto c = clientContext(pinning(ca_)); // no client identity
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT(r.server);
        CPPUNIT_ASSERT_EQUAL(std::string(), r.clientCertSeenByServer);

        // A client certificate from another CA is refused too.
        auto other = dhtgate::test::makeCa("other-ca");
        auto co = pinning(ca_);
        co.clientIdentity = dhtgate::test::makeLeaf(other, localhostSpec("intruder"));
        auto c2 = clientContext(co);
        auto r2 = handshake(s, c2, "localhost");
        CPPUNIT_ASSERT(r2.server);
    }

    void testInsecureOptIn() {
        auto other = dhtgate::test::makeCa("other-ca");
        auto s = serverContext(server_);
        ClientTlsOptions o = pinning(other);
        o.insecureSkipVerify = true;
        auto c = clientContext(o);
        auto r = handshake(s, c, "example.org"); // neither trusted nor the right name
        CPPUNIT_ASSERT_MESSAGE(r.client.message(), !r.client);
        CPPUNIT_ASSERT(!r.server);
    }

    void testPinnedSelfSignedIdentity() {
        auto self = dhtgate::test::makeLeaf({}, localhostSpec("self"));
        auto s = serverContext(self);
        auto c = clientContext(pinning(self));
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT_MESSAGE(r.client.message() + " " + r.clientReason, !r.client);
    }

    void testPinnedOpenDhtIdentity() {
        // A server identity as OpenDHT makes it (leaf signed by a CA identity, name only in the
        // CN): pinning the leaf's certificate trusts its issuer too, and the CN is matched.
        auto ca = dht::crypto::generateEcIdentity("dht-ca");
        auto leaf = dht::crypto::generateEcIdentity("localhost", ca);
        auto s = serverContext(leaf);
        auto c = clientContext(pinning(leaf));
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT_MESSAGE(r.client.message() + " " + r.clientReason, !r.client);
        auto wrong = handshake(s, c, "other.example");
        CPPUNIT_ASSERT_EQUAL(std::string("hostname mismatch"), wrong.clientReason);
    }

    void testSelfSignedCaIdentity() {
        // OpenDHT's default self-signed identity is a CA certificate without TLS key usage:
        // accepted only when exactly that certificate is pinned, and still name-checked.
        auto self = dht::crypto::generateEcIdentity("localhost");
        auto s = serverContext(self);
        auto c = clientContext(pinning(self));
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT_MESSAGE(r.client.message() + " " + r.clientReason, !r.client);
        auto wrongName = handshake(s, c, "example.org");
        CPPUNIT_ASSERT_EQUAL(std::string("hostname mismatch"), wrongName.clientReason);

        // Pinning something else (a CA) does not extend the exception to other certificates.
        auto ca = dhtgate::test::makeCa("ca");
        auto c2 = clientContext(pinning(ca));
        auto r2 = handshake(s, c2, "localhost");
        CPPUNIT_ASSERT(r2.client);
        // Nor does the system store.
        auto c3 = clientContext(ClientTlsOptions{});
        auto r3 = handshake(s, c3, "localhost");
        CPPUNIT_ASSERT(r3.client);
    }

    void testTrustedFile() {
        char dir[] = "/tmp/dhtgate-tls-XXXXXX";
        CPPUNIT_ASSERT(mkdtemp(dir));
        const std::string file = std::string(dir) + "/ca.crt";
        std::ofstream(file) << ca_.second->toString();
        ClientTlsOptions o;
        o.trustedFile = file;
        auto s = serverContext(server_);
        auto c = clientContext(o);
        auto r = handshake(s, c, "localhost");
        std::remove(file.c_str());
        ::rmdir(dir);
        CPPUNIT_ASSERT_MESSAGE(r.client.message() + " " + r.clientReason, !r.client);
    }

    void testCaRootFileEnvironment() {
        char dir[] = "/tmp/dhtgate-tls-XXXXXX";
        CPPUNIT_ASSERT(mkdtemp(dir));
        const std::string file = std::string(dir) + "/roots.pem";
        std::ofstream(file) << ca_.second->toString();
        ::setenv("CA_ROOT_FILE", file.c_str(), 1);
        std::optional<asio::ssl::context> c;
        auto st = dhtgate::tls::makeClientContext(ClientTlsOptions{}, c);
        ::unsetenv("CA_ROOT_FILE");
        std::remove(file.c_str());
        ::rmdir(dir);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        auto s = serverContext(server_);
        auto r = handshake(s, *c, "localhost");
        CPPUNIT_ASSERT_MESSAGE(r.client.message() + " " + r.clientReason, !r.client);

        ::setenv("CA_ROOT_FILE", "/nonexistent/roots.pem", 1);
        st = dhtgate::tls::makeClientContext(ClientTlsOptions{}, c);
        ::unsetenv("CA_ROOT_FILE");
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_config);
    }

    void testPemOptions() {
        // The same trust and client identity given as PEM text (what a std-types-only public
        // client header can carry).
        ServerTlsOptions so;
        so.clientCas = {ca_.second};
        so.requireClientCertificate = true;
        auto s = serverContext(server_, so);
        dhtgate::tls::OpenSslIdentity client;
        CPPUNIT_ASSERT(dhtgate::tls::exportIdentity(dhtgate::test::makeLeaf(ca_, localhostSpec("pem-client")), client));
        ClientTlsOptions o;
        o.trustedPem = ca_.second->toString();
        o.clientCertificatePem = client.chainPem;
        o.clientKeyPem = client.keyPem;
        auto c = clientContext(o);
        auto r = handshake(s, c, "localhost");
        CPPUNIT_ASSERT_MESSAGE(r.client.message() + " " + r.clientReason, !r.client);
        CPPUNIT_ASSERT_MESSAGE(r.server.message(), !r.server);
        CPPUNIT_ASSERT_EQUAL(std::string("pem-client"), r.clientCertSeenByServer);

        std::optional<asio::ssl::context> ctx;
        ClientTlsOptions garbage;
        garbage.trustedPem = "not a certificate";
        CPPUNIT_ASSERT(dhtgate::tls::makeClientContext(garbage, ctx).code == dhtgate::errc::invalid_config);
        ClientTlsOptions mismatched;
        dhtgate::tls::OpenSslIdentity other;
        CPPUNIT_ASSERT(dhtgate::tls::exportIdentity(dhtgate::test::makeCa("other"), other));
        mismatched.clientCertificatePem = client.chainPem;
        mismatched.clientKeyPem = other.keyPem;
        auto st = dhtgate::tls::makeClientContext(mismatched, ctx);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT_MESSAGE(st.message, st.message.find("does not match") != std::string::npos);
        ClientTlsOptions keyOnly;
        keyOnly.clientKeyPem = client.keyPem;
        CPPUNIT_ASSERT(dhtgate::tls::makeClientContext(keyOnly, ctx).code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(!ctx);
    }

    void testBadOptions() {
        std::optional<asio::ssl::context> ctx;
        ClientTlsOptions missing;
        missing.trustedFile = "/nonexistent/ca.crt";
        auto st = dhtgate::tls::makeClientContext(missing, ctx);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_config);
        CPPUNIT_ASSERT(st.message.find("/nonexistent/ca.crt") != std::string::npos);
        CPPUNIT_ASSERT(!ctx);

        ServerTlsOptions noIdentity;
        st = dhtgate::tls::makeServerContext(noIdentity, ctx);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(!ctx);

        ServerTlsOptions mismatched;
        auto other = dhtgate::test::makeCa("x");
        mismatched.identity = {other.first, server_.second};
        st = dhtgate::tls::makeServerContext(mismatched, ctx);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);

        ClientTlsOptions emptyPin;
        emptyPin.trusted = {nullptr};
        CPPUNIT_ASSERT(dhtgate::tls::makeClientContext(emptyPin, ctx).code == dhtgate::errc::invalid_config);

        auto c = clientContext(pinning(ca_));
        SSL* ssl = SSL_new(c.native_handle());
        CPPUNIT_ASSERT(dhtgate::tls::prepareClientSession(ssl, "").code == dhtgate::errc::invalid_url);
        CPPUNIT_ASSERT(dhtgate::tls::prepareClientSession(ssl, "[]").code == dhtgate::errc::invalid_url);
        CPPUNIT_ASSERT(dhtgate::tls::prepareClientSession(ssl, "localhost"));
        CPPUNIT_ASSERT_EQUAL(std::string("localhost"), std::string(SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)));
        SSL_free(ssl);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(TlsContextTest);
