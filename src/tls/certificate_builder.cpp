#include "tls/certificate_builder.h"

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <arpa/inet.h>

#include <ctime>
#include <exception>

namespace dhtgate::tls {
namespace {

std::string stripBrackets(const std::string& host) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        return host.substr(1, host.size() - 2);
    return host;
}

// Binary form of an IP literal for an IP subjectAltName (4 or 16 bytes), 0 if not an IP.
unsigned ipBytes(const std::string& host, unsigned char (&buf)[16]) {
    const std::string bare = stripBrackets(host);
    if (inet_pton(AF_INET, bare.c_str(), buf) == 1)
        return 4;
    if (inet_pton(AF_INET6, bare.c_str(), buf) == 1)
        return 16;
    return 0;
}

std::time_t offsetFromNow(std::chrono::seconds offset) {
    return std::time(nullptr) + offset.count();
}

// Collects the first failing GnuTLS step; later steps on a half-built certificate are harmless.
struct Steps {
    std::string failed;
    void operator()(int err, const char* what) {
        if (err < 0 && failed.empty())
            failed = std::string(what) + ": " + gnutls_strerror(err);
    }
};

Status build(const dht::crypto::PrivateKey& key, const CertificateSpec& spec, const dht::crypto::Identity& issuer,
             std::shared_ptr<dht::crypto::Certificate>& out) {
    if (!key.x509_key || !key.key)
        return Status::fail(errc::invalid_identity, "cannot build a certificate: no private key");
    const bool selfSigned = !issuer.first || !issuer.second;
    if (!selfSigned && !issuer.second->isCA())
        return Status::fail(errc::invalid_identity, "cannot build a certificate: the issuer is not a CA");

    gnutls_x509_crt_t crt = nullptr;
    if (int err = gnutls_x509_crt_init(&crt))
        return Status::fail(errc::invalid_identity, std::string("cannot build a certificate: ") + gnutls_strerror(err));
    auto cert = std::make_shared<dht::crypto::Certificate>(crt); // owns crt from here on

    const auto keyId = key.getPublicKey().getId();
    const std::string uid = keyId.toString();
    unsigned char serial[16];
    Steps ok;
    ok(gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)), "serial");
    serial[0] &= 0x7f; // a positive serial number
    ok(gnutls_x509_crt_set_version(crt, 3), "version");
    ok(gnutls_x509_crt_set_key(crt, key.x509_key), "key");
    ok(gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)), "serial");
    ok(gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, spec.commonName.data(),
                                     static_cast<unsigned>(spec.commonName.size())),
       "common name");
    ok(gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_LDAP_UID, 0, uid.data(), static_cast<unsigned>(uid.size())),
       "uid");
    ok(gnutls_x509_crt_set_subject_key_id(crt, keyId.data(), keyId.size()), "subject key id");
    ok(gnutls_x509_crt_set_activation_time(crt, offsetFromNow(spec.notBefore)), "activation time");
    ok(gnutls_x509_crt_set_expiration_time(crt, offsetFromNow(spec.notAfter)), "expiration time");
    for (const auto& host : spec.hostNames) {
        unsigned char ip[16];
        if (unsigned len = ipBytes(host, ip))
            ok(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, len, GNUTLS_FSAN_APPEND), "IP name");
        else
            ok(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, host.data(),
                                                    static_cast<unsigned>(host.size()), GNUTLS_FSAN_APPEND),
               "DNS name");
    }
    if (spec.isCa) {
        ok(gnutls_x509_crt_set_basic_constraints(crt, 1, -1), "basic constraints");
        ok(gnutls_x509_crt_set_key_usage(crt,
                                         GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN | GNUTLS_KEY_DIGITAL_SIGNATURE),
           "key usage");
    } else {
        // digitalSignature for (EC)DHE, keyEncipherment for RSA key transport, dataEncipherment as
        // OpenDHT's own end-entity certificates have it.
        ok(gnutls_x509_crt_set_basic_constraints(crt, 0, -1), "basic constraints");
        ok(gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT |
                                                  GNUTLS_KEY_DATA_ENCIPHERMENT),
           "key usage");
        ok(gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0), "server purpose");
        ok(gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_CLIENT, 0), "client purpose");
    }
    if (selfSigned)
        ok(gnutls_x509_crt_privkey_sign(crt, crt, key.key, GNUTLS_DIG_SHA256, 0), "self-signature");
    else
        ok(gnutls_x509_crt_privkey_sign(crt, issuer.second->cert, issuer.first->key, GNUTLS_DIG_SHA256, 0),
           "signature");
    if (!ok.failed.empty())
        return Status::fail(errc::invalid_identity, "cannot build a certificate: " + ok.failed);
    if (!selfSigned)
        cert->issuer = issuer.second;
    out = std::move(cert);
    return Status::ok();
}

} // namespace

Status buildCertificate(const dht::crypto::PrivateKey& key, const CertificateSpec& spec,
                        const dht::crypto::Identity& issuer, std::shared_ptr<dht::crypto::Certificate>& out) noexcept {
    try {
        return build(key, spec, issuer, out);
    } catch (const std::exception& e) {
        return Status::fail(errc::invalid_identity, std::string("cannot build a certificate: ") + e.what());
    }
}

bool isIpLiteral(const std::string& host) noexcept {
    unsigned char buf[16];
    try {
        return ipBytes(host, buf) != 0;
    } catch (...) {
        return false;
    }
}

} // namespace dhtgate::tls
