// Per-thread caches for the costly public-key steps of put parsing: importing the owner key
// (GnuTLS PEM/DER parse, ~10 us) and verifying a signature (RSA verify, ~30-80 us). Clients
// re-POST the same permanent puts (every 22 h, on reconnect) and load tests repeat bodies, so
// both are worth remembering. Each thread has its own small caches: no locks.
#pragma once

#include <opendht/value.h>

#include <memory>
#include <string_view>

namespace dhtgate::codec::detail {

using OwnerKey = decltype(dht::Value::owner);

/// Imports a public key from PEM or DER text; nullptr if it is not a valid key. Repeated texts
/// return the same key object (so later caches can compare keys by address).
OwnerKey importOwner(std::string_view text);

/// True when `v` is signed and its signature verifies. A value whose signed fields, owner object
/// and signature equal those of a recently verified value is not verified again.
bool verifySignature(dht::Value& v);

} // namespace dhtgate::codec::detail
