// dhtgate TLS: RAII owners for the OpenSSL objects the TLS component hands around, and the
// small status type its configuration-time functions return.
//
// Thread contract: none of these types is shared between threads by this component; an X509 or
// EVP_PKEY may be read from several threads once built (OpenSSL reference-counts them).
#pragma once

#include "dhtgate/error.h"

#include <openssl/types.h>

#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace dhtgate::tls {

struct X509Deleter {
    void operator()(X509* x) const noexcept;
};
struct EvpPkeyDeleter {
    void operator()(EVP_PKEY* k) const noexcept;
};
struct BioDeleter {
    void operator()(BIO* b) const noexcept;
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

/// A new owner of `x` (the reference count is raised). Null in, null out.
X509Ptr shareX509(X509* x) noexcept;
EvpPkeyPtr shareKey(EVP_PKEY* k) noexcept;

/// Result of a configuration-time TLS operation: an error code (a dhtgate::errc, usually
/// invalid_identity or invalid_config) plus a human-readable reason. Converts to true on success.
struct Status {
    std::error_code code;
    std::string message;

    explicit operator bool() const noexcept { return !code; }
    static Status ok() { return {}; }
    static Status fail(errc e, std::string why) { return {make_error_code(e), std::move(why)}; }
};

/// Empties OpenSSL's per-thread error queue and returns its entries joined by "; " (or "" if it
/// was empty). Call right after a failed OpenSSL call so that stale entries don't leak into the
/// next message.
std::string takeOpenSslErrors();

/// Parses every PEM certificate in `pem`, in order. Fails if there is none or one is malformed.
Status parsePemCertificates(const std::string& pem, std::vector<X509Ptr>& out);

/// Parses an unencrypted PEM private key (PKCS#8 or traditional). Fails on anything else,
/// including an encrypted key.
Status parsePemPrivateKey(const std::string& pem, EvpPkeyPtr& out);

/// PEM text of one certificate.
Status toPem(X509* cert, std::string& out);

} // namespace dhtgate::tls
