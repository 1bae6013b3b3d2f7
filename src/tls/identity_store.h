// dhtgate TLS: reads and writes identity files in the layout OpenDHT's tools use
// (dht::crypto::saveIdentity(id, PATH, password)): PATH.pem holds the private key (PKCS#8 PEM,
// encrypted with the password if one was given) and PATH.crt the certificate followed by its
// issuers (PEM). A proxy run "with an identity file" serves HTTPS and signs with it (spec §9).
//
// Configuration-time, blocking file IO: call before starting the io_context or from a worker
// thread, never from an io handler. Nothing throws: every failure is errc::invalid_identity with a
// message naming the file and the reason (missing, unreadable, corrupt, wrong password,
// key/certificate mismatch, already exists).
#pragma once

#include "tls/openssl_util.h"

#include <opendht/crypto.h>

#include <string>
#include <vector>

namespace dhtgate::tls {

struct IdentityFiles {
    std::string key;         ///< private key file
    std::string certificate; ///< certificate chain file
};

/// The reference layout for `prefix`: {prefix + ".pem", prefix + ".crt"}.
IdentityFiles identityFiles(const std::string& prefix);

/// Loads and checks an identity (the certificate's public key must be the key's). An empty
/// `password` reads an unencrypted key; an encrypted key then fails with a message asking for one.
Status loadIdentity(const IdentityFiles& files, const std::string& password, dht::crypto::Identity& out) noexcept;
inline Status loadIdentity(const std::string& prefix, const std::string& password,
                           dht::crypto::Identity& out) noexcept {
    return loadIdentity(identityFiles(prefix), password, out);
}

struct CreateIdentityOptions {
    enum class KeyType { rsa, ec };
    std::string name{"dhtgate"}; ///< certificate common name
    /// subjectAltName entries (DNS names or IP literals) so HTTPS clients can check the host name.
    std::vector<std::string> hostNames{"localhost", "127.0.0.1", "::1"};
    /// RSA by default: OpenDHT 2.x verifies value signatures as RSA-SHA512 only, so an EC identity
    /// serves HTTPS but cannot sign values that 2.x nodes accept. EC is much faster to generate.
    KeyType keyType{KeyType::rsa};
    unsigned rsaBits{4096};
    std::string password; ///< encrypts the key file when not empty
};

/// Generates a new self-signed identity (a TLS end-entity certificate valid 10 years) and writes
/// it to `files` with mode 0600. Refuses to overwrite: fails if either file exists. On failure
/// no file is left behind.
Status createIdentity(const IdentityFiles& files, const CreateIdentityOptions& options,
                      dht::crypto::Identity& out) noexcept;
inline Status createIdentity(const std::string& prefix, const CreateIdentityOptions& options,
                             dht::crypto::Identity& out) noexcept {
    return createIdentity(identityFiles(prefix), options, out);
}

/// What `--identity PATH [--identity-create]` needs: loads the identity at `prefix`; when neither
/// file exists and `create` is true, creates it instead (`*created` tells which happened). If
/// only one of the two files exists nothing is created: that is reported as the missing file.
Status loadOrCreateIdentity(const std::string& prefix, const std::string& password, bool create,
                            const CreateIdentityOptions& options, dht::crypto::Identity& out,
                            bool* created = nullptr) noexcept;

} // namespace dhtgate::tls
