// dhtgate TLS: builds X.509 certificates for OpenDHT keys with what HTTPS needs and
// dht::crypto::Certificate::generate does not set: subjectAltName entries (DNS names and IP
// addresses, so host-name verification works), TLS key purposes and an explicit validity window.
//
// Configuration-time only; never throws; may be called from any thread.
#pragma once

#include "tls/openssl_util.h"

#include <opendht/crypto.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace dhtgate::tls {

struct CertificateSpec {
    std::string commonName{"dhtgate"};
    /// subjectAltName entries: IP literals ("127.0.0.1", "::1") become IP entries, anything else a
    /// DNS entry. Empty: no subjectAltName (peers can then only match the common name).
    std::vector<std::string> hostNames;
    /// Validity window relative to now. A negative `notAfter` yields an expired certificate.
    std::chrono::seconds notBefore{-std::chrono::hours(1)};
    std::chrono::seconds notAfter{std::chrono::hours(24 * 365 * 10)};
    bool isCa{false}; ///< CA:TRUE + keyCertSign/cRLSign instead of a TLS end-entity certificate
};

/// Signs a certificate for `key` with `issuer` (its certificate becomes the result's issuer), or
/// self-signs when `issuer` is empty. Like OpenDHT's own certificates, the subject carries the
/// public key id as UID and as subjectKeyIdentifier. Fails with errc::invalid_identity.
Status buildCertificate(const dht::crypto::PrivateKey& key, const CertificateSpec& spec,
                        const dht::crypto::Identity& issuer, std::shared_ptr<dht::crypto::Certificate>& out) noexcept;

/// True if `host` is an IPv4 or IPv6 literal (brackets around IPv6 are accepted).
bool isIpLiteral(const std::string& host) noexcept;

} // namespace dhtgate::tls
