#include "support/test_identities.h"

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <arpa/inet.h>

#include <ctime>
#include <random>
#include <stdexcept>

namespace dhtgate::test {
namespace {

void check(int err, const char* what) {
    if (err < 0)
        throw std::runtime_error(std::string("test identity: ") + what + ": " + gnutls_strerror(err));
}

void addIp(gnutls_x509_crt_t crt, const std::string& text) {
    unsigned char buf[16];
    unsigned len = 0;
    if (inet_pton(AF_INET, text.c_str(), buf) == 1)
        len = 4;
    else if (inet_pton(AF_INET6, text.c_str(), buf) == 1)
        len = 16;
    else
        throw std::runtime_error("test identity: bad IP " + text);
    check(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, buf, len, GNUTLS_FSAN_APPEND), "ip SAN");
}

} // namespace

dht::crypto::Identity makeCa(const std::string& name) { return dht::crypto::generateEcIdentity(name, {}, true); }

dht::crypto::Identity makeLeaf(const dht::crypto::Identity& ca, const LeafSpec& spec) {
    auto key = std::make_shared<dht::crypto::PrivateKey>(dht::crypto::PrivateKey::generateEC());
    gnutls_x509_crt_t crt = nullptr;
    check(gnutls_x509_crt_init(&crt), "init");
    // The Certificate owns crt from here on, so every throw below frees it.
    auto cert = std::make_shared<dht::crypto::Certificate>(crt);

    check(gnutls_x509_crt_set_version(crt, 3), "version");
    check(gnutls_x509_crt_set_key(crt, key->x509_key), "key");
    std::random_device rd;
    unsigned char serial[8];
    for (auto& b : serial)
        b = static_cast<unsigned char>(rd());
    serial[0] &= 0x7f; // positive
    check(gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)), "serial");
    check(gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, spec.commonName.data(),
                                        static_cast<unsigned>(spec.commonName.size())),
          "CN");
    for (const auto& dns : spec.dnsNames)
        check(gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, dns.data(),
                                                   static_cast<unsigned>(dns.size()), GNUTLS_FSAN_APPEND),
              "dns SAN");
    for (const auto& ip : spec.ipAddresses)
        addIp(crt, ip);
    check(gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT), "usage");
    check(gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0), "server purpose");
    check(gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_CLIENT, 0), "client purpose");
    const std::time_t now = std::time(nullptr);
    check(gnutls_x509_crt_set_activation_time(crt, now + spec.notBefore.count()), "activation");
    check(gnutls_x509_crt_set_expiration_time(crt, now + spec.notAfter.count()), "expiration");

    if (ca.first && ca.second) {
        check(gnutls_x509_crt_privkey_sign(crt, ca.second->cert, ca.first->key, GNUTLS_DIG_SHA256, 0), "sign");
        cert->issuer = ca.second;
    } else {
        check(gnutls_x509_crt_privkey_sign(crt, crt, key->key, GNUTLS_DIG_SHA256, 0), "self-sign");
    }
    return {key, cert};
}

} // namespace dhtgate::test
