// Key addressing and the value -> JSON encoder (spec §2, §4.1). The request-body parsers live in
// value_parse.cpp.
#include "codec/value_codec.h"

#include "codec/base64.h"
#include "codec/hex.h"
#include "codec/json.h"

#include <opendht/crypto.h>

namespace dhtgate::codec {

bool parseKey(std::string_view param, dht::InfoHash& out, std::string& reason)
{
    if (param.empty()) {
        reason = "Empty key";
        return false;
    }
    std::size_t hexCount = 0;
    bool allHex = true;
    for (char ch : param) {
        auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c >= 0x7f) {
            reason = "Invalid character in key";
            return false;
        }
        if (allHex && detail::hexValue(ch) >= 0)
            ++hexCount;
        else
            allHex = false;
    }
    if (hexCount >= 40 && param.size() > 40) {
        reason = allHex ? "Key has more than 40 hex characters" : "Key has extra characters after 40 hex characters";
        return false;
    }
    if (param.size() == 40 && allHex) {
        detail::parseHash(param, out);
        // The reference hashes the all-zero string like any other non-key (spec §2).
        if (out)
            return true;
    }
    out = dht::InfoHash::get(param);
    return true;
}

namespace {

// Exact size of appendJsonString(s) for ASCII strings without escapes; a lower bound otherwise.
inline std::size_t quotedSize(std::size_t n) { return n + 2; }

void appendBase64Member(std::string& out, std::string_view name, const dht::Blob& bytes)
{
    out.append(name);
    out.push_back('"');
    base64::encode(out, bytes);
    out.push_back('"');
}

using OwnerPtr = decltype(dht::Value::owner);

// The PEM text of `key` as a JSON string literal, without the C string terminator the 2.x
// reference keeps at its end.
std::string exportPemJson(const dht::crypto::PublicKey& key)
{
    std::string pem = key.toString();
    while (!pem.empty() && pem.back() == '\0')
        pem.pop_back();
    std::string quoted;
    quoted.reserve(pem.size() + 64);
    json::appendJsonString(quoted, pem);
    return quoted;
}

// Exporting a key to PEM through GnuTLS costs ~10 us, 20x the rest of the encoding, and the same
// few owners are encoded over and over (every listener of a key, every get). So each thread keeps
// the quoted PEM of its last few owners. An entry is keyed by the key object's address and only trusted
// while its weak_ptr is alive: a live weak_ptr means the object at that address is still the
// same key, so an address reused by a new key is never mistaken for the old one.
class PemCache {
public:
    const std::string& get(const OwnerPtr& key)
    {
        for (auto& e : entries_)
            if (e.raw == key.get() && !e.weak.expired())
                return e.pemJson;
        Entry& e = entries_[next_];
        next_ = (next_ + 1) % kSize;
        e.raw = key.get();
        e.weak = key;
        e.pemJson = exportPemJson(*key);
        return e.pemJson;
    }

private:
    static constexpr std::size_t kSize = 16;
    struct Entry {
        const void* raw {nullptr};
        std::weak_ptr<OwnerPtr::element_type> weak;
        std::string pemJson;
    };
    Entry entries_[kSize];
    std::size_t next_ {0};
};

const std::string& ownerPemJson(const OwnerPtr& key)
{
    thread_local PemCache cache;
    return cache.get(key);
}

} // namespace

void appendValueJson(std::string& out, const dht::Value& v, bool expired)
{
    // Members are written directly in alphabetical order:
    // cypher, data, expired, id, owner, prio, seq, sig, to, type, utype.
    if (v.isEncrypted()) {
        out.reserve(out.size() + 64 + base64::encodedSize(v.cypher.size()));
        appendBase64Member(out, "{\"cypher\":", v.cypher);
        if (expired)
            out.append(",\"expired\":true");
        out.append(",\"id\":\"");
        json::appendUint(out, v.id);
        out.push_back('"');
        if (v.priority) {
            out.append(",\"prio\":");
            json::appendUint(out, v.priority);
        }
        out.push_back('}');
        return;
    }

    const bool hasOwner = v.owner && *v.owner;
    const bool isSigned = v.isSigned();
    static const std::string noPem;
    const std::string& pemJson = hasOwner ? ownerPemJson(v.owner) : noPem;

    out.reserve(out.size() + 96 + base64::encodedSize(v.data.size()) + quotedSize(v.user_type.size())
                + (hasOwner ? pemJson.size() + 32 : 0) + (isSigned ? base64::encodedSize(v.signature.size()) : 0));

    appendBase64Member(out, "{\"data\":", v.data);
    if (expired)
        out.append(",\"expired\":true");
    out.append(",\"id\":\"");
    json::appendUint(out, v.id);
    out.push_back('"');
    if (hasOwner) {
        out.append(",\"owner\":");
        out.append(pemJson);
    }
    if (v.priority) {
        out.append(",\"prio\":");
        json::appendUint(out, v.priority);
    }
    if (hasOwner) {
        out.append(",\"seq\":");
        json::appendUint(out, v.seq);
    }
    if (isSigned)
        appendBase64Member(out, ",\"sig\":", v.signature);
    if (hasOwner && v.recipient) {
        out.append(",\"to\":\"");
        detail::appendHex(out, v.recipient);
        out.push_back('"');
    }
    out.append(",\"type\":");
    json::appendUint(out, v.type);
    if (!v.user_type.empty()) {
        out.append(",\"utype\":");
        json::appendJsonString(out, v.user_type);
    }
    out.push_back('}');
}

std::string valueJson(const dht::Value& v, bool expired)
{
    std::string out;
    appendValueJson(out, v, expired);
    return out;
}

} // namespace dhtgate::codec
