#include "tls/identity_bridge.h"

#include "support/test_identities.h"

#include <cppunit/extensions/HelperMacros.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <string>

using dhtgate::tls::exportIdentity;
using dhtgate::tls::exportTrustAnchor;
using dhtgate::tls::OpenSslIdentity;
using dhtgate::tls::TrustAnchor;

namespace {

size_t countPemBlocks(const std::string& pem) {
    size_t n = 0;
    for (size_t at = pem.find("-----BEGIN CERTIFICATE-----"); at != std::string::npos;
         at = pem.find("-----BEGIN CERTIFICATE-----", at + 1))
        ++n;
    return n;
}

// X509_verify_cert of `leaf` (+ `untrusted` intermediates) against one trust anchor.
int verifyAgainst(X509* anchor, X509* leaf, int* error = nullptr) {
    X509_STORE* store = X509_STORE_new();
    X509_STORE_add_cert(store, anchor);
    X509_STORE_CTX* ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, leaf, nullptr);
    int ok = X509_verify_cert(ctx);
    if (error)
        *error = X509_STORE_CTX_get_error(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    ERR_clear_error();
    return ok;
}

} // namespace

class TlsIdentityBridgeTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TlsIdentityBridgeTest);
    CPPUNIT_TEST(testSelfSigned);
    CPPUNIT_TEST(testCaSignedChain);
    CPPUNIT_TEST(testRsaIdentity);
    CPPUNIT_TEST(testMismatchedKey);
    CPPUNIT_TEST(testEmptyIdentity);
    CPPUNIT_TEST(testTrustAnchor);
    CPPUNIT_TEST_SUITE_END();

public:
    void testSelfSigned() {
        auto id = dht::crypto::generateEcIdentity("self");
        OpenSslIdentity out;
        auto st = exportIdentity(id, out);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(out.key && out.certificate);
        CPPUNIT_ASSERT_EQUAL(1, X509_check_private_key(out.certificate.get(), out.key.get()));
        CPPUNIT_ASSERT(out.issuers.empty());
        CPPUNIT_ASSERT_EQUAL(size_t(0), out.keyPem.find("-----BEGIN PRIVATE KEY-----"));
        CPPUNIT_ASSERT_EQUAL(size_t(1), countPemBlocks(out.chainPem));
        // The self-signed certificate is its own anchor.
        CPPUNIT_ASSERT_EQUAL(1, verifyAgainst(out.certificate.get(), out.certificate.get()));
    }

    void testCaSignedChain() {
        auto ca = dht::crypto::generateEcIdentity("ca");
        auto leaf = dht::crypto::generateEcIdentity("leaf", ca);
        OpenSslIdentity out;
        auto st = exportIdentity(leaf, out);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT_EQUAL(1, X509_check_private_key(out.certificate.get(), out.key.get()));
        CPPUNIT_ASSERT_EQUAL(size_t(1), out.issuers.size());
        CPPUNIT_ASSERT_EQUAL(size_t(2), countPemBlocks(out.chainPem));
        // Chain order: leaf first, then the CA that issued it.
        CPPUNIT_ASSERT_EQUAL(int(X509_V_OK), X509_check_issued(out.issuers[0].get(), out.certificate.get()));
        CPPUNIT_ASSERT_EQUAL(std::string(leaf.second->toString(true)), out.chainPem);

        TrustAnchor anchor;
        CPPUNIT_ASSERT(exportTrustAnchor(*ca.second, anchor));
        CPPUNIT_ASSERT_EQUAL(0, X509_cmp(anchor.certificate.get(), out.issuers[0].get()));
        CPPUNIT_ASSERT_EQUAL(1, verifyAgainst(anchor.certificate.get(), out.certificate.get()));

        auto other = dht::crypto::generateEcIdentity("other-ca");
        TrustAnchor wrong;
        CPPUNIT_ASSERT(exportTrustAnchor(*other.second, wrong));
        int error = 0;
        CPPUNIT_ASSERT(verifyAgainst(wrong.certificate.get(), out.certificate.get(), &error) != 1);
        CPPUNIT_ASSERT_EQUAL(int(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY), error);
    }

    void testRsaIdentity() {
        auto id = dht::crypto::generateIdentity("rsa", {}, 2048);
        OpenSslIdentity out;
        auto st = exportIdentity(id, out);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT_EQUAL(int(EVP_PKEY_RSA), EVP_PKEY_base_id(out.key.get()));
        CPPUNIT_ASSERT_EQUAL(1, X509_check_private_key(out.certificate.get(), out.key.get()));
    }

    void testMismatchedKey() {
        auto a = dht::crypto::generateEcIdentity("a");
        auto b = dht::crypto::generateEcIdentity("b");
        OpenSslIdentity out;
        auto st = exportIdentity({a.first, b.second}, out);
        CPPUNIT_ASSERT(!st);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(st.message.find("does not match") != std::string::npos);
        CPPUNIT_ASSERT(!out.key && !out.certificate);
        CPPUNIT_ASSERT_EQUAL(0UL, ERR_peek_error());
    }

    void testEmptyIdentity() {
        OpenSslIdentity out;
        auto st = exportIdentity({}, out);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        auto a = dht::crypto::generateEcIdentity("a");
        CPPUNIT_ASSERT(exportIdentity({a.first, nullptr}, out).code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(exportIdentity({nullptr, a.second}, out).code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(!out.certificate);
    }

    void testTrustAnchor() {
        auto ca = dhtgate::test::makeCa("anchor-ca");
        TrustAnchor anchor;
        CPPUNIT_ASSERT(exportTrustAnchor(*ca.second, anchor));
        CPPUNIT_ASSERT_EQUAL(ca.second->toString(false), anchor.pem);
        CPPUNIT_ASSERT(X509_check_ca(anchor.certificate.get()) != 0);

        // A leaf with a SAN, signed by that CA, verifies against the converted anchor.
        dhtgate::test::LeafSpec spec;
        spec.dnsNames = {"localhost"};
        auto leaf = dhtgate::test::makeLeaf(ca, spec);
        TrustAnchor leafX509;
        CPPUNIT_ASSERT(exportTrustAnchor(*leaf.second, leafX509));
        CPPUNIT_ASSERT_EQUAL(1, verifyAgainst(anchor.certificate.get(), leafX509.certificate.get()));

        dht::crypto::Certificate empty;
        auto st = exportTrustAnchor(empty, anchor);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(anchor.certificate); // untouched on failure
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(TlsIdentityBridgeTest);
