// Request-body parsers of the value codec (spec §3.5, §3.8-3.10, §4.1, §6.1, §15 items 4, 6-8):
// strict where the reference was lenient, answering 400/413 instead of 500 or silent corruption.
#include "codec/value_codec.h"

#include "codec/base64.h"
#include "codec/hex.h"
#include "codec/json.h"
#include "codec/owner_cache.h"

#include <limits>

namespace dhtgate::codec {

namespace {

bool fail(ParseError& err, int status, std::string reason)
{
    err.status = status;
    err.reason = std::move(reason);
    return false;
}

// Absent and null members are treated alike (the reference skips null members too).
const json::Value* member(const json::Value& obj, std::string_view name)
{
    const json::Value* m = obj.find(name);
    return (m && !m->isNull()) ? m : nullptr;
}

bool readBase64(const json::Value& obj, std::string_view name, dht::Blob& out, ParseError& err)
{
    const json::Value* m = member(obj, name);
    if (!m)
        return true;
    if (!m->isString())
        return fail(err, 400, "Invalid " + std::string(name) + ": not a string");
    if (!base64::decode(m->asString(), out))
        return fail(err, 400, "Invalid " + std::string(name) + ": bad base64");
    return true;
}

template <typename T>
bool readUint(const json::Value& obj, std::string_view name, T& out, ParseError& err)
{
    const json::Value* m = member(obj, name);
    if (!m)
        return true;
    std::uint64_t n;
    if (!m->isNumber() || !m->getUint64(n) || n > std::numeric_limits<T>::max())
        return fail(err, 400, "Invalid " + std::string(name) + ": not an integer in range");
    out = static_cast<T>(n);
    return true;
}

bool readString(const json::Value& obj, std::string_view name, std::string& out, ParseError& err)
{
    const json::Value* m = member(obj, name);
    if (!m)
        return true;
    if (!m->isString())
        return fail(err, 400, "Invalid " + std::string(name) + ": not a string");
    out = m->asString();
    return true;
}

// "id": decimal string or integer; anything unusable means "no id" (0), as in the reference.
dht::Value::Id readId(const json::Value& obj)
{
    const json::Value* m = member(obj, "id");
    if (!m)
        return 0;
    std::uint64_t id = 0;
    if (m->isString()) {
        const std::string& s = m->asString();
        if (s.empty() || s.size() > 20)
            return 0;
        for (char c : s) {
            if (c < '0' || c > '9')
                return 0;
            const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
            if (id > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
                return 0;
            id = id * 10 + d;
        }
        return id;
    }
    return m->getUint64(id) ? id : 0;
}

bool readOwner(const json::Value& obj, dht::Value& v, ParseError& err)
{
    const json::Value* m = member(obj, "owner");
    if (!m)
        return true;
    if (!m->isString())
        return fail(err, 400, "Invalid owner: not a string");
    std::string_view text = m->asString();
    // 2.x encoders keep the C string terminator at the end of the PEM text (spec §4.1).
    while (!text.empty() && text.back() == '\0')
        text.remove_suffix(1);
    if (text.empty())
        return fail(err, 400, "Invalid owner: empty");
    v.owner = detail::importOwner(text);
    if (!v.owner)
        return fail(err, 400, "Invalid owner: not a public key");
    return true;
}

bool readRecipient(const json::Value& obj, dht::Value& v, ParseError& err)
{
    const json::Value* m = member(obj, "to");
    if (!m)
        return true;
    if (!m->isString() || !detail::parseHash(m->asString(), v.recipient))
        return fail(err, 400, "Invalid to: not 40 hex characters");
    return true;
}

// Fills `v` from the members of a value object (everything but "permanent" and "expired").
bool readValue(const json::Value& obj, dht::Value& v, ParseError& err)
{
    v.id = readId(obj);
    return readBase64(obj, "data", v.data, err) && readBase64(obj, "cypher", v.cypher, err)
        && readBase64(obj, "sig", v.signature, err) && readUint(obj, "seq", v.seq, err)
        && readUint(obj, "type", v.type, err) && readUint(obj, "prio", v.priority, err)
        && readString(obj, "utype", v.user_type, err) && readOwner(obj, v, err) && readRecipient(obj, v, err);
}

bool readPush(const json::Value& obj, PushRequest& push, ParseError& err)
{
    if (!readString(obj, "key", push.key, err) || !readString(obj, "client_id", push.client_id, err)
        || !readString(obj, "session_id", push.session_id, err) || !readString(obj, "platform", push.platform, err)
        || !readString(obj, "topic", push.topic, err))
        return false;
    if (const json::Value* r = member(obj, "refresh")) {
        if (!r->isBool())
            return fail(err, 400, "Invalid refresh: not a boolean");
        push.refresh = r->asBool();
    }
    return true;
}

bool parseObject(std::string_view body, json::Value& doc, ParseError& err)
{
    json::Error jerr;
    if (!json::parse(body, doc, jerr) || !doc.isObject())
        return fail(err, 400, "Incorrect JSON");
    return true;
}

} // namespace

std::optional<PutRequest> parsePut(std::string_view body, std::size_t max_value_size, ParseError& err)
{
    if (body.empty()) {
        fail(err, 400, "Missing parameters");
        return std::nullopt;
    }
    json::Value doc;
    if (!parseObject(body, doc, err))
        return std::nullopt;

    PutRequest req;
    req.value = std::make_shared<dht::Value>();
    dht::Value& v = *req.value;
    if (!readValue(doc, v, err))
        return std::nullopt;
    if (v.size() > max_value_size) {
        fail(err, 413, "Value too large");
        return std::nullopt;
    }
    if (!v.signature.empty() && !v.owner) {
        fail(err, 400, "Signature without owner");
        return std::nullopt;
    }
    // Encrypted values are relayed untouched; their signature is inside the cypher.
    if (!v.isEncrypted() && v.isSigned() && !detail::verifySignature(v)) {
        fail(err, 400, "Invalid signature");
        return std::nullopt;
    }

    if (const json::Value* perm = doc.find("permanent")) {
        // Any value, even false or null, makes the put permanent (spec §6.1, §15 item 5).
        req.permanent = true;
        if (perm->isObject()) {
            PushRequest push;
            if (!readPush(*perm, push, err))
                return std::nullopt;
            req.push = std::move(push);
        }
    }
    return req;
}

std::optional<PushRequest> parsePushRequest(std::string_view body, ParseError& err)
{
    json::Value doc;
    if (!parseObject(body, doc, err))
        return std::nullopt;
    PushRequest push;
    if (!readPush(doc, push, err))
        return std::nullopt;
    if (push.key.empty()) {
        fail(err, 400, "No token");
        return std::nullopt;
    }
    return push;
}

std::shared_ptr<dht::Value> parseValueLine(std::string_view line, bool& expired, ParseError& err)
{
    expired = false;
    json::Value doc;
    if (!parseObject(line, doc, err))
        return nullptr;
    auto v = std::make_shared<dht::Value>();
    if (!readValue(doc, *v, err))
        return nullptr;
    if (const json::Value* e = member(doc, "expired")) {
        if (!e->isBool()) {
            fail(err, 400, "Invalid expired: not a boolean");
            return nullptr;
        }
        expired = e->asBool();
    }
    return v;
}

} // namespace dhtgate::codec
