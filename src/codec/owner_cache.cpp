#include "codec/owner_cache.h"

#include <opendht/crypto.h>

#include <array>
#include <string>

namespace dhtgate::codec::detail {

namespace {

// A small round-robin cache: hits are found by a linear scan, misses replace the oldest entry.
template <typename Entry, std::size_t N>
struct RingCache {
    std::array<Entry, N> entries {};
    std::size_t next {0};

    template <typename Pred>
    Entry* find(Pred pred)
    {
        for (auto& e : entries)
            if (pred(e))
                return &e;
        return nullptr;
    }
    Entry& slot()
    {
        Entry& e = entries[next];
        next = (next + 1) % N;
        return e;
    }
};

struct KeyEntry {
    std::string text;
    OwnerKey key;
};

// The signed fields of a verified value (spec §4.1: seq, owner, to, type, data, utype) and its
// signature. The owner is compared by address: the entry holds a reference, so the address
// cannot be reused while the entry lives, and importOwner returns the same object for the same
// key text.
struct VerifiedEntry {
    OwnerKey owner;
    std::uint16_t seq {0};
    dht::InfoHash recipient;
    dht::ValueType::Id type {0};
    dht::Blob data;
    std::string userType;
    dht::Blob signature;

    bool matches(const dht::Value& v) const
    {
        return owner && owner == v.owner && seq == v.seq && type == v.type && recipient == v.recipient
            && signature == v.signature && data == v.data && userType == v.user_type;
    }
};

// Bigger values are verified every time rather than kept in memory.
constexpr std::size_t kMaxCachedData = 8 * 1024;

} // namespace

OwnerKey importOwner(std::string_view text)
{
    thread_local RingCache<KeyEntry, 16> cache;
    if (auto* hit = cache.find([&](const KeyEntry& e) { return e.key && e.text == text; }))
        return hit->key;
    OwnerKey key;
    try {
        key = std::make_shared<dht::crypto::PublicKey>(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    } catch (const std::exception&) {
        return nullptr;
    }
    if (!*key)
        return nullptr;
    KeyEntry& e = cache.slot();
    e.text.assign(text);
    e.key = key;
    return key;
}

bool verifySignature(dht::Value& v)
{
    if (!v.isSigned())
        return false;
    thread_local RingCache<VerifiedEntry, 32> cache;
    if (cache.find([&](const VerifiedEntry& e) { return e.matches(v); }))
        return true;
    if (!v.checkSignature())
        return false;
    if (v.data.size() + v.user_type.size() <= kMaxCachedData) {
        VerifiedEntry& e = cache.slot();
        e.owner = v.owner;
        e.seq = v.seq;
        e.recipient = v.recipient;
        e.type = v.type;
        e.data = v.data;
        e.userType = v.user_type;
        e.signature = v.signature;
    }
    return true;
}

} // namespace dhtgate::codec::detail
