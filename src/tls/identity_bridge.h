// dhtgate TLS: the one place where GnuTLS key material (OpenDHT's crypto types) becomes
// OpenSSL key material (what asio::ssl and RESTinio use). Spec: proxy-protocol.md §10.5.
//
// Both functions run at configuration time, never throw, and leave their output empty on failure.
// They may be called from any thread; they only read the GnuTLS objects.
#pragma once

#include "tls/openssl_util.h"

#include <opendht/crypto.h>

#include <string>
#include <vector>

namespace dhtgate::tls {

/// An identity in OpenSSL form, in both shapes callers need: objects for SSL_CTX_* calls and PEM
/// text for APIs that load from memory or files.
struct OpenSslIdentity {
    EvpPkeyPtr key;               ///< the private key
    X509Ptr certificate;          ///< the leaf certificate, matching `key`
    std::vector<X509Ptr> issuers; ///< the leaf's issuer first, then its issuer, ... (may be empty)
    std::string keyPem;           ///< PKCS#8, unencrypted ("-----BEGIN PRIVATE KEY-----")
    std::string chainPem;         ///< PEM of the leaf followed by each issuer, in chain order

    OpenSslIdentity() = default;
    OpenSslIdentity(OpenSslIdentity&&) = default;
    OpenSslIdentity& operator=(OpenSslIdentity&&) = default;
    ~OpenSslIdentity(); ///< wipes keyPem
};

/// Converts `id` (private key + certificate with its issuer chain). Fails with
/// errc::invalid_identity if either half is missing, cannot be exported, or if the key does
/// not match the certificate.
Status exportIdentity(const dht::crypto::Identity& id, OpenSslIdentity& out) noexcept;

/// An OpenSSL trust anchor made from one certificate (only that one, not its issuers).
struct TrustAnchor {
    X509Ptr certificate;
    std::string pem;
};

/// Converts `cert` (its own certificate only; walk `cert.issuer` to convert a whole chain).
/// Fails with errc::invalid_identity if `cert` is empty or cannot be exported.
Status exportTrustAnchor(const dht::crypto::Certificate& cert, TrustAnchor& out) noexcept;

} // namespace dhtgate::tls
