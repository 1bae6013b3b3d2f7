// dhtgate TLS: builders for the asio::ssl::context of the HTTPS server and of the HTTP client,
// and the per-connection host-name setup the client must do (SNI + verified name).
// Spec: proxy-protocol.md §10.4 (client) and §10.6 (server).
//
// Contexts are built once at configuration time (never throw; errors come back as a Status) and
// then shared by every connection: an asio::ssl::context may be used by several streams, but must
// outlive them. RESTinio is deliberately not included here; see docs/tls.md for how the server
// hands the context to restinio::tls_options_t.
#pragma once

#include "tls/openssl_util.h"

#include <asio/ssl/context.hpp>
#include <opendht/crypto.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dhtgate::tls {

struct ServerTlsOptions {
    dht::crypto::Identity identity; ///< required: the HTTPS key and certificate (+ issuers, sent too)
    /// Request a client certificate, verified against these anchors (each certificate and its
    /// issuers). Empty (the default, like the reference): no client certificate is requested.
    std::vector<std::shared_ptr<dht::crypto::Certificate>> clientCas;
    bool requireClientCertificate{false}; ///< with clientCas: refuse clients without a certificate
};

/// TLS 1.2 minimum, no renegotiation, no compression, forward-secret AEAD ciphers for TLS 1.2,
/// server cipher preference, the identity's chain. Fails with errc::invalid_identity (bad
/// identity) or errc::invalid_config.
Status makeServerContext(const ServerTlsOptions& options, std::optional<asio::ssl::context>& out) noexcept;

struct ClientTlsOptions {
    /// Trust only these certificates (a CA, or a server's own identity certificate), each with
    /// its issuers, instead of the system store. A pinned certificate is trusted even if it is not
    /// self-signed (OpenSSL's partial-chain mode), which is what pinning a leaf means.
    std::vector<std::shared_ptr<dht::crypto::Certificate>> trusted;
    /// A PEM file of certificates to trust instead of the system store (e.g. a proxy's `id.crt`).
    /// May be combined with `trusted`.
    std::string trustedFile;
    /// PEM text of certificates to trust instead of the system store. May be combined with the above.
    std::string trustedPem;
    /// Skip every server-certificate check. Never the default: only for explicit user opt-in.
    bool insecureSkipVerify{false};
    /// Presented to servers that ask for a client certificate. Empty: none.
    dht::crypto::Identity clientIdentity;
    /// The same in PEM form (chain leaf first; unencrypted key), e.g. OpenSslIdentity::chainPem
    /// and keyPem. Used when clientIdentity is empty.
    std::string clientCertificatePem;
    std::string clientKeyPem;
};

/// TLS 1.2 minimum; verifies the server chain against the system CAs unless `trusted`,
/// `trustedFile` or `trustedPem` pin anchors. The system store is, as in OpenDHT's client, the file named by the
/// environment variable CA_ROOT_FILE or the directory CA_ROOT_PATH if set, else OpenSSL's default
/// paths (which honour SSL_CERT_FILE / SSL_CERT_DIR).
/// Host names are checked per connection: call prepareClientSession on each new stream.
/// Fails with errc::invalid_config (unreadable trust file, empty pin) or errc::invalid_identity.
Status makeClientContext(const ClientTlsOptions& options, std::optional<asio::ssl::context>& out) noexcept;

/// Per client connection, before the handshake: sets SNI to `host` (DNS names only: RFC 6066
/// forbids IP literals there) and, when `verifyHost`, the name or IP address the server
/// certificate must match (IP literals must match an IP subjectAltName). `host` may be a
/// bracketed IPv6 literal. Pass stream.native_handle(). Fails with errc::invalid_url for an empty
/// host, errc::invalid_config if OpenSSL refuses the name.
Status prepareClientSession(SSL* ssl, const std::string& host, bool verifyHost = true) noexcept;

/// Why the peer certificate was rejected, from the session's verify result (e.g. "certificate
/// has expired", "hostname mismatch"), or "" if verification passed. For error messages.
std::string verifyFailureReason(const SSL* ssl);

} // namespace dhtgate::tls
