#include "tls/tls_context.h"

#include "tls/certificate_builder.h"
#include "tls/identity_bridge.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <cstdlib>
#include <exception>

namespace dhtgate::tls {
namespace {

// Mozilla's "intermediate" list: ECDHE/DHE key exchange with AEAD ciphers only. TLS 1.3 suites
// are configured separately by OpenSSL and all are fine.
constexpr const char* kTls12Ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
                                      "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384";

Status openSslFailure(errc e, const std::string& what) {
    return Status::fail(e, what + ": " + takeOpenSslErrors());
}

Status commonSetup(SSL_CTX* ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
        return openSslFailure(errc::invalid_config, "cannot set the minimum TLS version");
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1)
        return openSslFailure(errc::invalid_config, "cannot set the TLS 1.2 ciphers");
    return Status::ok();
}

// Adds `cert` and each of its issuers to `store` as trust anchors.
Status addAnchors(X509_STORE* store, const dht::crypto::Certificate& cert) {
    for (const dht::crypto::Certificate* c = &cert; c && c->cert; c = c->issuer.get()) {
        TrustAnchor anchor;
        if (auto s = exportTrustAnchor(*c, anchor); !s)
            return s;
        // A duplicate (the same CA pinned twice) is not an error: X509_STORE_add_cert ignores it.
        if (X509_STORE_add_cert(store, anchor.certificate.get()) != 1)
            return openSslFailure(errc::invalid_config, "cannot add a trusted certificate");
    }
    return Status::ok();
}

// OpenDHT's default identities are self-signed CA certificates whose key usage (keyCertSign,
// cRLSign) does not allow TLS server authentication, so OpenSSL reports "unsuitable certificate
// purpose" even when the client pinned exactly that certificate. An exact pin is a stronger
// statement than a purpose extension, so with pinned anchors we accept that one error for a leaf
// that is itself one of the anchors. Every other check (validity, host name) still applies.
bool isPinnedAnchor(X509_STORE_CTX* store_ctx, X509* cert) {
    X509_STORE* store = X509_STORE_CTX_get0_store(store_ctx);
    STACK_OF(X509_OBJECT)* objects = store ? X509_STORE_get0_objects(store) : nullptr;
    for (int i = 0; objects && i < sk_X509_OBJECT_num(objects); ++i) {
        X509* anchor = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i));
        if (anchor && X509_cmp(anchor, cert) == 0)
            return true;
    }
    return false;
}

int verifyPinned(int preverified, X509_STORE_CTX* store_ctx) {
    if (preverified)
        return 1;
    return X509_STORE_CTX_get_error(store_ctx) == X509_V_ERR_INVALID_PURPOSE &&
           X509_STORE_CTX_get_error_depth(store_ctx) == 0 &&
           isPinnedAnchor(store_ctx, X509_STORE_CTX_get_current_cert(store_ctx));
}

Status useKeyAndChain(SSL_CTX* ctx, X509* leaf, const std::vector<X509Ptr>& issuers, EVP_PKEY* key) {
    if (SSL_CTX_use_certificate(ctx, leaf) != 1)
        return openSslFailure(errc::invalid_identity, "OpenSSL refuses the certificate");
    for (const auto& issuer : issuers)
        if (SSL_CTX_add1_chain_cert(ctx, issuer.get()) != 1)
            return openSslFailure(errc::invalid_identity, "OpenSSL refuses an issuer certificate");
    if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)
        return openSslFailure(errc::invalid_identity, "the private key does not match the certificate");
    return Status::ok();
}

Status useIdentity(SSL_CTX* ctx, const dht::crypto::Identity& identity) {
    OpenSslIdentity id;
    if (auto s = exportIdentity(identity, id); !s)
        return s;
    return useKeyAndChain(ctx, id.certificate.get(), id.issuers, id.key.get());
}

Status usePemIdentity(SSL_CTX* ctx, const std::string& chainPem, const std::string& keyPem) {
    std::vector<X509Ptr> chain;
    if (auto s = parsePemCertificates(chainPem, chain); !s)
        return Status::fail(errc::invalid_identity, "client certificate: " + s.message);
    EvpPkeyPtr key;
    if (auto s = parsePemPrivateKey(keyPem, key); !s)
        return Status::fail(errc::invalid_identity, "client key: " + s.message);
    X509Ptr leaf = std::move(chain.front());
    chain.erase(chain.begin());
    return useKeyAndChain(ctx, leaf.get(), chain, key.get());
}

Status buildServer(const ServerTlsOptions& options, std::optional<asio::ssl::context>& out) {
    asio::ssl::context context(asio::ssl::context::tls_server);
    SSL_CTX* ctx = context.native_handle();
    if (auto s = commonSetup(ctx); !s)
        return s;
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_SINGLE_DH_USE | SSL_OP_SINGLE_ECDH_USE);
    // Let OpenSSL pick DH parameters matching the key size for the DHE suites.
    SSL_CTX_set_dh_auto(ctx, 1);
    if (auto s = useIdentity(ctx, options.identity); !s)
        return s;
    if (!options.clientCas.empty()) {
        X509_STORE* store = SSL_CTX_get_cert_store(ctx);
        for (const auto& ca : options.clientCas) {
            if (!ca || !*ca)
                return Status::fail(errc::invalid_config, "empty client CA certificate");
            if (auto s = addAnchors(store, *ca); !s)
                return s;
        }
        int mode = SSL_VERIFY_PEER;
        if (options.requireClientCertificate)
            mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
        SSL_CTX_set_verify(ctx, mode, nullptr);
    }
    out.emplace(std::move(context));
    return Status::ok();
}

// The system trust store. Like OpenDHT's client, CA_ROOT_FILE (a PEM file) or CA_ROOT_PATH (a
// hashed directory) replace it when set; otherwise OpenSSL's defaults apply (which honour
// SSL_CERT_FILE and SSL_CERT_DIR).
Status useSystemStore(SSL_CTX* ctx) {
    const char* file = std::getenv("CA_ROOT_FILE");
    const char* dir = std::getenv("CA_ROOT_PATH");
    if (file && *file) {
        if (SSL_CTX_load_verify_locations(ctx, file, nullptr) != 1)
            return openSslFailure(errc::invalid_config, std::string("cannot load CA_ROOT_FILE ") + file);
    } else if (dir && *dir) {
        if (SSL_CTX_load_verify_locations(ctx, nullptr, dir) != 1)
            return openSslFailure(errc::invalid_config, std::string("cannot use CA_ROOT_PATH ") + dir);
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        return openSslFailure(errc::invalid_config, "cannot load the system CA certificates");
    }
    return Status::ok();
}

Status buildClient(const ClientTlsOptions& options, std::optional<asio::ssl::context>& out) {
    asio::ssl::context context(asio::ssl::context::tls_client);
    SSL_CTX* ctx = context.native_handle();
    if (auto s = commonSetup(ctx); !s)
        return s;

    const bool pinned = !options.trusted.empty() || !options.trustedFile.empty() || !options.trustedPem.empty();
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    for (const auto& cert : options.trusted) {
        if (!cert || !*cert)
            return Status::fail(errc::invalid_config, "empty pinned certificate");
        if (auto s = addAnchors(store, *cert); !s)
            return s;
    }
    if (!options.trustedFile.empty() && SSL_CTX_load_verify_locations(ctx, options.trustedFile.c_str(), nullptr) != 1)
        return openSslFailure(errc::invalid_config, "cannot load trusted certificates from " + options.trustedFile);
    if (!options.trustedPem.empty()) {
        std::vector<X509Ptr> certs;
        if (auto s = parsePemCertificates(options.trustedPem, certs); !s)
            return Status::fail(errc::invalid_config, "trusted certificates: " + s.message);
        for (const auto& cert : certs)
            if (X509_STORE_add_cert(store, cert.get()) != 1)
                return openSslFailure(errc::invalid_config, "cannot add a trusted certificate");
    }
    if (pinned)
        X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN);
    else if (auto s = useSystemStore(ctx); !s)
        return s;

    if (options.insecureSkipVerify)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    else
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, pinned ? verifyPinned : nullptr);

    if (options.clientIdentity.first || options.clientIdentity.second) {
        if (auto s = useIdentity(ctx, options.clientIdentity); !s)
            return s;
    } else if (!options.clientCertificatePem.empty() || !options.clientKeyPem.empty()) {
        if (auto s = usePemIdentity(ctx, options.clientCertificatePem, options.clientKeyPem); !s)
            return s;
    }
    out.emplace(std::move(context));
    return Status::ok();
}

template <typename Build, typename Options>
Status guarded(Build build, const Options& options, std::optional<asio::ssl::context>& out) noexcept {
    try {
        Status s = build(options, out);
        ERR_clear_error();
        return s;
    } catch (const std::exception& e) {
        // asio::ssl::context's constructor throws if OpenSSL cannot allocate a context.
        ERR_clear_error();
        return Status::fail(errc::invalid_config, std::string("cannot create a TLS context: ") + e.what());
    }
}

} // namespace

Status makeServerContext(const ServerTlsOptions& options, std::optional<asio::ssl::context>& out) noexcept {
    return guarded(buildServer, options, out);
}

Status makeClientContext(const ClientTlsOptions& options, std::optional<asio::ssl::context>& out) noexcept {
    return guarded(buildClient, options, out);
}

Status prepareClientSession(SSL* ssl, const std::string& host, bool verifyHost) noexcept {
    try {
        std::string bare = host;
        if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']')
            bare = bare.substr(1, bare.size() - 2);
        if (bare.empty())
            return Status::fail(errc::invalid_url, "empty host name");
        const bool ip = isIpLiteral(bare);
        // SSL_set_tlsext_host_name is a macro with a C cast; this is its expansion.
        if (!ip && SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                            const_cast<char*>(bare.c_str())) != 1)
            return openSslFailure(errc::invalid_config, "cannot set SNI to " + bare);
        if (!verifyHost)
            return Status::ok();
        X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
        // Wildcards only as a whole left-most label, like browsers.
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, bare.c_str()) : SSL_set1_host(ssl, bare.c_str());
        if (ok != 1)
            return openSslFailure(errc::invalid_config, "cannot set the expected host name " + bare);
        return Status::ok();
    } catch (const std::exception& e) {
        return Status::fail(errc::invalid_config, e.what());
    }
}

std::string verifyFailureReason(const SSL* ssl) {
    long result = SSL_get_verify_result(ssl);
    if (result == X509_V_OK)
        return {};
    return X509_verify_cert_error_string(result);
}

} // namespace dhtgate::tls
