#include "tls/identity_bridge.h"

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <climits>
#include <exception>

namespace dhtgate::tls {
namespace {

// Owns a gnutls_datum_t filled by a gnutls_*_export2 call; wipes it because it may hold a key.
struct GnutlsDatum {
    gnutls_datum_t d{nullptr, 0};
    GnutlsDatum() = default;
    GnutlsDatum(const GnutlsDatum&) = delete;
    GnutlsDatum& operator=(const GnutlsDatum&) = delete;
    ~GnutlsDatum() {
        if (d.data) {
            OPENSSL_cleanse(d.data, d.size);
            gnutls_free(d.data);
        }
    }
    std::string str() const { return std::string(reinterpret_cast<const char*>(d.data), d.size); }
};

std::string gnutlsError(int err) {
    return gnutls_strerror(err);
}

Status certificatePem(gnutls_x509_crt_t crt, std::string& out) {
    GnutlsDatum pem;
    if (int err = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &pem.d))
        return Status::fail(errc::invalid_identity, "cannot export certificate: " + gnutlsError(err));
    out = pem.str();
    return Status::ok();
}

Status certificateToX509(gnutls_x509_crt_t crt, X509Ptr& x509, std::string& pem) {
    if (auto s = certificatePem(crt, pem); !s)
        return s;
    std::vector<X509Ptr> parsed;
    if (auto s = parsePemCertificates(pem, parsed); !s)
        return s;
    x509 = std::move(parsed.front());
    return Status::ok();
}

// PKCS#8 PEM of the key. OpenDHT keys always carry their x509 form; a key that only has the
// abstract gnutls_privkey_t (e.g. built elsewhere) is exported through it.
Status keyPkcs8(const dht::crypto::PrivateKey& key, std::string& out) {
    gnutls_x509_privkey_t x509 = key.x509_key;
    gnutls_x509_privkey_t exported = nullptr;
    if (!x509) {
        if (!key.key)
            return Status::fail(errc::invalid_identity, "the identity has no private key");
        if (int err = gnutls_privkey_export_x509(key.key, &exported))
            return Status::fail(errc::invalid_identity, "cannot export private key: " + gnutlsError(err));
        x509 = exported;
    }
    GnutlsDatum pem;
    int err = gnutls_x509_privkey_export2_pkcs8(x509, GNUTLS_X509_FMT_PEM, nullptr, GNUTLS_PKCS_PLAIN, &pem.d);
    if (exported)
        gnutls_x509_privkey_deinit(exported);
    if (err)
        return Status::fail(errc::invalid_identity, "cannot export private key as PKCS#8: " + gnutlsError(err));
    out = pem.str();
    return Status::ok();
}

Status exportIdentityImpl(const dht::crypto::Identity& id, OpenSslIdentity& out) {
    if (!id.first || !*id.first)
        return Status::fail(errc::invalid_identity, "the identity has no private key");
    if (!id.second || !*id.second)
        return Status::fail(errc::invalid_identity, "the identity has no certificate");

    OpenSslIdentity result;
    if (auto s = keyPkcs8(*id.first, result.keyPem); !s)
        return s;
    if (auto s = parsePemPrivateKey(result.keyPem, result.key); !s)
        return s;

    for (const dht::crypto::Certificate* c = id.second.get(); c && c->cert; c = c->issuer.get()) {
        X509Ptr x509;
        std::string pem;
        if (auto s = certificateToX509(c->cert, x509, pem); !s)
            return s;
        result.chainPem += pem;
        if (!result.certificate)
            result.certificate = std::move(x509);
        else
            result.issuers.push_back(std::move(x509));
    }
    if (X509_check_private_key(result.certificate.get(), result.key.get()) != 1) {
        ERR_clear_error();
        return Status::fail(errc::invalid_identity, "the private key does not match the certificate");
    }
    out = std::move(result);
    return Status::ok();
}

} // namespace

OpenSslIdentity::~OpenSslIdentity() {
    if (!keyPem.empty())
        OPENSSL_cleanse(keyPem.data(), keyPem.size());
}

Status exportIdentity(const dht::crypto::Identity& id, OpenSslIdentity& out) noexcept {
    try {
        return exportIdentityImpl(id, out);
    } catch (const std::exception& e) {
        return Status::fail(errc::invalid_identity, std::string("cannot convert the identity: ") + e.what());
    }
}

Status exportTrustAnchor(const dht::crypto::Certificate& cert, TrustAnchor& out) noexcept {
    try {
        if (!cert)
            return Status::fail(errc::invalid_identity, "empty certificate");
        TrustAnchor result;
        if (auto s = certificateToX509(cert.cert, result.certificate, result.pem); !s)
            return s;
        out = std::move(result);
        return Status::ok();
    } catch (const std::exception& e) {
        return Status::fail(errc::invalid_identity, std::string("cannot convert the certificate: ") + e.what());
    }
}

} // namespace dhtgate::tls
