// Test keys shared by the test suites: RSA keys are slow to generate, so each is made once per
// process and reused.
#pragma once

#include <opendht/crypto.h>

#include <memory>
#include <mutex>

namespace dhtgate::test {

/// One of a few fixed, lazily generated 2048-bit RSA private keys (index 0..3). Thread-safe.
inline const dht::crypto::PrivateKey& rsaKey(unsigned index = 0)
{
    static std::shared_ptr<dht::crypto::PrivateKey> keys[4];
    static std::once_flag once[4];
    index %= 4;
    std::call_once(once[index], [index] {
        keys[index] = std::make_shared<dht::crypto::PrivateKey>(dht::crypto::PrivateKey::generate(2048));
    });
    return *keys[index];
}

} // namespace dhtgate::test
