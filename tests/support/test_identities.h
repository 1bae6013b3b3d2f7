// Test helper: EC identities with the properties TLS tests need (host names, IP addresses,
// validity in the past), which dht::crypto::generateIdentity cannot express. Thin wrapper over
// tls::buildCertificate that throws, to keep tests short.
#pragma once

#include <opendht/crypto.h>

#include <chrono>
#include <string>
#include <vector>

namespace dhtgate::test {

struct LeafSpec {
    std::string commonName{"dhtgate-test"};
    std::vector<std::string> dnsNames;    ///< subjectAltName DNS entries
    std::vector<std::string> ipAddresses; ///< subjectAltName IP entries, textual ("127.0.0.1", "::1")
    /// Validity window relative to now; a negative `notAfter` makes an expired certificate.
    std::chrono::seconds notBefore{-std::chrono::hours(1)};
    std::chrono::seconds notAfter{std::chrono::hours(24)};
};

/// A self-signed EC CA identity (basicConstraints CA:TRUE, keyCertSign).
dht::crypto::Identity makeCa(const std::string& name);

/// An EC leaf identity usable for TLS server and client authentication. Signed by `ca`
/// (whose certificate becomes the leaf's issuer) or self-signed when `ca` is empty.
/// Throws std::runtime_error on failure.
dht::crypto::Identity makeLeaf(const dht::crypto::Identity& ca, const LeafSpec& spec);

} // namespace dhtgate::test
