#include "support/test_identities.h"

#include "tls/certificate_builder.h"

#include <stdexcept>

namespace dhtgate::test {

dht::crypto::Identity makeCa(const std::string& name) {
    return dht::crypto::generateEcIdentity(name, {}, true);
}

dht::crypto::Identity makeLeaf(const dht::crypto::Identity& ca, const LeafSpec& spec) {
    auto key = std::make_shared<dht::crypto::PrivateKey>(dht::crypto::PrivateKey::generateEC());
    tls::CertificateSpec cs;
    cs.commonName = spec.commonName;
    cs.hostNames = spec.dnsNames;
    cs.hostNames.insert(cs.hostNames.end(), spec.ipAddresses.begin(), spec.ipAddresses.end());
    cs.notBefore = spec.notBefore;
    cs.notAfter = spec.notAfter;
    std::shared_ptr<dht::crypto::Certificate> cert;
    auto st = tls::buildCertificate(*key, cs, ca, cert);
    if (!st)
        throw std::runtime_error("test identity: " + st.message);
    return {key, cert};
}

} // namespace dhtgate::test
