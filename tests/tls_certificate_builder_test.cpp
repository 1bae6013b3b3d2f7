#include "tls/certificate_builder.h"

#include "tls/identity_bridge.h"

#include <cppunit/extensions/HelperMacros.h>
#include <openssl/x509v3.h>

#include <chrono>

using dhtgate::tls::buildCertificate;
using dhtgate::tls::CertificateSpec;

class TlsCertificateBuilderTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TlsCertificateBuilderTest);
    CPPUNIT_TEST(testNamesAndIds);
    CPPUNIT_TEST(testCaAndIssuer);
    CPPUNIT_TEST(testValidityWindow);
    CPPUNIT_TEST(testIpLiteral);
    CPPUNIT_TEST_SUITE_END();

public:
    void testNamesAndIds() {
        dht::crypto::PrivateKey key = dht::crypto::PrivateKey::generateEC();
        CertificateSpec spec;
        spec.commonName = "gw";
        spec.hostNames = {"localhost", "gw.example", "127.0.0.1", "[::1]"};
        std::shared_ptr<dht::crypto::Certificate> cert;
        auto st = buildCertificate(key, spec, {}, cert);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT_EQUAL(std::string("gw"), cert->getName());
        CPPUNIT_ASSERT_EQUAL(key.getPublicKey().getId().toString(), cert->getUID());
        CPPUNIT_ASSERT(cert->getId() == key.getPublicKey().getId());
        CPPUNIT_ASSERT(!cert->isCA());
        CPPUNIT_ASSERT(!cert->issuer);

        dhtgate::tls::TrustAnchor x;
        CPPUNIT_ASSERT(dhtgate::tls::exportTrustAnchor(*cert, x));
        X509* c = x.certificate.get();
        CPPUNIT_ASSERT_EQUAL(1, X509_check_host(c, "gw.example", 0, 0, nullptr));
        CPPUNIT_ASSERT_EQUAL(1, X509_check_host(c, "localhost", 0, 0, nullptr));
        CPPUNIT_ASSERT_EQUAL(0, X509_check_host(c, "gw", 0, 0, nullptr)); // SANs present: CN ignored
        CPPUNIT_ASSERT_EQUAL(1, X509_check_ip_asc(c, "127.0.0.1", 0));
        CPPUNIT_ASSERT_EQUAL(1, X509_check_ip_asc(c, "::1", 0));
        CPPUNIT_ASSERT_EQUAL(0, X509_check_ip_asc(c, "10.0.0.1", 0));
        CPPUNIT_ASSERT_EQUAL(1, X509_check_purpose(c, X509_PURPOSE_SSL_SERVER, 0));
        CPPUNIT_ASSERT_EQUAL(1, X509_check_purpose(c, X509_PURPOSE_SSL_CLIENT, 0));
    }

    void testCaAndIssuer() {
        auto caKey = std::make_shared<dht::crypto::PrivateKey>(dht::crypto::PrivateKey::generateEC());
        CertificateSpec caSpec;
        caSpec.isCa = true;
        std::shared_ptr<dht::crypto::Certificate> caCert;
        CPPUNIT_ASSERT(buildCertificate(*caKey, caSpec, {}, caCert));
        CPPUNIT_ASSERT(caCert->isCA());

        dht::crypto::PrivateKey leafKey = dht::crypto::PrivateKey::generateEC();
        std::shared_ptr<dht::crypto::Certificate> leaf;
        CPPUNIT_ASSERT(buildCertificate(leafKey, {}, {caKey, caCert}, leaf));
        CPPUNIT_ASSERT(leaf->issuer == caCert);
        CPPUNIT_ASSERT_EQUAL(caCert->getName(), leaf->getIssuerName());

        // A leaf cannot issue certificates.
        auto leafKeyPtr = std::make_shared<dht::crypto::PrivateKey>(dht::crypto::PrivateKey::generateEC());
        std::shared_ptr<dht::crypto::Certificate> none;
        auto st = buildCertificate(leafKey, {}, {leafKeyPtr, leaf}, none);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(!none);

        dht::crypto::PrivateKey empty;
        st = buildCertificate(empty, {}, {}, none);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
    }

    void testValidityWindow() {
        dht::crypto::PrivateKey key = dht::crypto::PrivateKey::generateEC();
        CertificateSpec spec;
        spec.notBefore = -std::chrono::hours(48);
        spec.notAfter = -std::chrono::hours(24);
        std::shared_ptr<dht::crypto::Certificate> cert;
        CPPUNIT_ASSERT(buildCertificate(key, spec, {}, cert));
        CPPUNIT_ASSERT(cert->getExpiration() < std::chrono::system_clock::now());
        CPPUNIT_ASSERT(cert->getActivation() < cert->getExpiration());
    }

    void testIpLiteral() {
        CPPUNIT_ASSERT(dhtgate::tls::isIpLiteral("127.0.0.1"));
        CPPUNIT_ASSERT(dhtgate::tls::isIpLiteral("::1"));
        CPPUNIT_ASSERT(dhtgate::tls::isIpLiteral("[2001:db8::1]"));
        CPPUNIT_ASSERT(!dhtgate::tls::isIpLiteral("localhost"));
        CPPUNIT_ASSERT(!dhtgate::tls::isIpLiteral("1.2.3"));
        CPPUNIT_ASSERT(!dhtgate::tls::isIpLiteral(""));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(TlsCertificateBuilderTest);
