#include "state/state_store.h"

#include "dhtgate/error.h"

#include <fmt/format.h>
#include <msgpack.hpp>

#include <chrono>
#include <map>
#include <stdexcept>

namespace dhtgate::state {
namespace {

// Thrown inside decode() only; decode() turns it (and msgpack's and libopendht's exceptions)
// into an errc::state_corrupt result.
struct Corrupt : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const msgpack::object* findMember(const msgpack::object& map, std::string_view name) {
    const auto& m = map.via.map;
    for (std::uint32_t i = 0; i < m.size; ++i) {
        const auto& k = m.ptr[i].key;
        if (k.type == msgpack::type::STR && std::string_view(k.via.str.ptr, k.via.str.size) == name)
            return &m.ptr[i].val;
    }
    return nullptr;
}

void requireMap(const msgpack::object& o, const std::string& where) {
    if (o.type != msgpack::type::MAP)
        throw Corrupt(where + ": expected a map");
}

std::string stringMember(const msgpack::object& map, std::string_view name, const std::string& where) {
    const auto* o = findMember(map, name);
    if (!o)
        return {};
    if (o->type != msgpack::type::STR)
        throw Corrupt(fmt::format("{}: \"{}\" is not a string", where, name));
    return std::string(o->via.str.ptr, o->via.str.size);
}

std::int64_t intValue(const msgpack::object& o, std::string_view name, const std::string& where) {
    if (o.type == msgpack::type::POSITIVE_INTEGER) {
        if (o.via.u64 > static_cast<std::uint64_t>(INT64_MAX))
            throw Corrupt(fmt::format("{}: \"{}\" is out of range", where, name));
        return static_cast<std::int64_t>(o.via.u64);
    }
    if (o.type == msgpack::type::NEGATIVE_INTEGER)
        return o.via.i64;
    throw Corrupt(fmt::format("{}: \"{}\" is not an integer", where, name));
}

std::int64_t requiredInt(const msgpack::object& map, std::string_view name, const std::string& where) {
    const auto* o = findMember(map, name);
    if (!o)
        throw Corrupt(fmt::format("{}: \"{}\" is missing", where, name));
    return intValue(*o, name, where);
}

push::Platform platformMember(const msgpack::object& map, const std::string& where) {
    const auto* o = findMember(map, "t");
    if (!o)
        return push::Platform::none;
    auto code = intValue(*o, "t", where);
    if (!push::isKnownPlatformCode(code))
        throw Corrupt(fmt::format("{}: unknown push type {}", where, code));
    return static_cast<push::Platform>(code);
}

// A reference file wraps each per-key (or per-token) map in a one-element array
// (MSGPACK_DEFINE_ARRAY of a struct with one member).
const msgpack::object& unwrapSingleton(const msgpack::object& o, const std::string& where) {
    if (o.type != msgpack::type::ARRAY || o.via.array.size < 1)
        throw Corrupt(where + ": expected a one-element array");
    return o.via.array.ptr[0];
}

dht::InfoHash hashKey(const msgpack::object& o, const std::string& where) {
    if (o.type != msgpack::type::BIN || o.via.bin.size != dht::InfoHash::size())
        throw Corrupt(where + ": key is not a 20-byte binary hash");
    return dht::InfoHash(o);
}

void decodePuts(const msgpack::object& puts, std::int64_t now, LoadResult& out) {
    requireMap(puts, "\"puts\"");
    for (std::uint32_t i = 0; i < puts.via.map.size; ++i) {
        const auto& entry = puts.via.map.ptr[i];
        auto key = hashKey(entry.key, "\"puts\"");
        std::string keyWhere = "puts[" + key.toString() + "]";
        const auto& byId = unwrapSingleton(entry.val, keyWhere);
        requireMap(byId, keyWhere);
        for (std::uint32_t j = 0; j < byId.via.map.size; ++j) {
            const auto& idEntry = byId.via.map.ptr[j];
            if (idEntry.key.type != msgpack::type::POSITIVE_INTEGER)
                throw Corrupt(keyWhere + ": value id is not an unsigned integer");
            std::uint64_t id = idEntry.key.via.u64;
            std::string where = fmt::format("{}[{}]", keyWhere, id);
            const auto& p = idEntry.val;
            requireMap(p, where);
            PermanentPutRecord rec;
            rec.key = key;
            const auto* v = findMember(p, "value");
            if (!v)
                throw Corrupt(where + ": \"value\" is missing");
            try {
                rec.value = std::make_shared<dht::Value>(*v);
            } catch (const std::exception& e) { // msgpack::type_error, crypto errors on a bad owner key
                throw Corrupt(fmt::format("{}: \"value\" is not a valid DHT value ({})", where, e.what()));
            }
            if (rec.value->id != id)
                throw Corrupt(fmt::format("{}: value id {} does not match", where, rec.value->id));
            rec.expiry = requiredInt(p, "exp", where);
            rec.client_id = stringMember(p, "cid", where);
            rec.session_id = stringMember(p, "sid", where);
            rec.platform = platformMember(p, where);
            rec.token = stringMember(p, "token", where);
            rec.topic = stringMember(p, "top", where);
            if (rec.expiry < now) {
                ++out.dropped_expired;
                continue;
            }
            out.state.puts.emplace_back(std::move(rec));
        }
    }
}

void decodeListeners(const msgpack::object& listeners, std::int64_t now, LoadResult& out) {
    requireMap(listeners, "\"pushListeners\"");
    for (std::uint32_t i = 0; i < listeners.via.map.size; ++i) {
        const auto& entry = listeners.via.map.ptr[i];
        if (entry.key.type != msgpack::type::STR)
            throw Corrupt("\"pushListeners\": token is not a string");
        std::string token(entry.key.via.str.ptr, entry.key.via.str.size);
        // Tokens can be long URLs; the index is enough to find the entry.
        std::string tokenWhere = fmt::format("pushListeners[#{}]", i);
        const auto& byKey = unwrapSingleton(entry.val, tokenWhere);
        requireMap(byKey, tokenWhere);
        for (std::uint32_t j = 0; j < byKey.via.map.size; ++j) {
            const auto& keyEntry = byKey.via.map.ptr[j];
            auto key = hashKey(keyEntry.key, tokenWhere);
            std::string keyWhere = tokenWhere + "[" + key.toString() + "]";
            if (keyEntry.val.type != msgpack::type::ARRAY)
                throw Corrupt(keyWhere + ": expected an array of listeners");
            const auto& arr = keyEntry.val.via.array;
            for (std::uint32_t k = 0; k < arr.size; ++k) {
                std::string where = fmt::format("{}[{}]", keyWhere, k);
                const auto& l = arr.ptr[k];
                requireMap(l, where);
                PushListenerRecord rec;
                rec.token = token;
                rec.key = key;
                rec.client_id = stringMember(l, "cid", where);
                rec.expiry = requiredInt(l, "exp", where);
                rec.session_id = stringMember(l, "sid", where);
                rec.platform = platformMember(l, where);
                rec.topic = stringMember(l, "top", where);
                if (rec.expiry < now) {
                    ++out.dropped_expired;
                    continue;
                }
                out.state.listeners.emplace_back(std::move(rec));
            }
        }
    }
}

void decodeRoot(const msgpack::object& root, std::int64_t now, LoadResult& out) {
    if (root.type != msgpack::type::MAP)
        throw Corrupt("the top level is not a map");
    if (const auto* v = findMember(root, "version")) {
        if (v->type != msgpack::type::POSITIVE_INTEGER)
            throw Corrupt("\"version\" is not an unsigned integer");
        if (v->via.u64 == 0 || v->via.u64 > kStateFormatVersion)
            throw Corrupt(fmt::format("format version {} is not supported (this build reads versions up to {})",
                                      v->via.u64, kStateFormatVersion));
        out.version = static_cast<std::uint32_t>(v->via.u64);
    }
    if (const auto* puts = findMember(root, "puts"))
        decodePuts(*puts, now, out);
    if (const auto* listeners = findMember(root, "pushListeners"))
        decodeListeners(*listeners, now, out);
}

template <typename Packer>
void packPut(Packer& pk, const PermanentPutRecord& p) {
    bool typed = p.platform != push::Platform::none;
    pk.pack_map(2 + !p.client_id.empty() + !p.session_id.empty() + typed + !p.token.empty() + !p.topic.empty());
    pk.pack("value");
    p.value->msgpack_pack(pk);
    pk.pack("exp");
    pk.pack(p.expiry);
    if (!p.client_id.empty()) {
        pk.pack("cid");
        pk.pack(p.client_id);
    }
    if (!p.session_id.empty()) {
        pk.pack("sid");
        pk.pack(p.session_id);
    }
    if (typed) {
        pk.pack("t");
        pk.pack(static_cast<int>(p.platform));
    }
    // Unlike the reference (spec §8 quirk), the token is kept even for platform none, so a put
    // made with an empty platform still gets its expiry notice after a restart.
    if (!p.token.empty()) {
        pk.pack("token");
        pk.pack(p.token);
    }
    if (!p.topic.empty()) {
        pk.pack("top");
        pk.pack(p.topic);
    }
}

template <typename Packer>
void packListener(Packer& pk, const PushListenerRecord& l) {
    pk.pack_map(4 + !l.topic.empty());
    pk.pack("cid");
    pk.pack(l.client_id);
    pk.pack("exp");
    pk.pack(l.expiry);
    pk.pack("sid");
    pk.pack(l.session_id);
    pk.pack("t");
    pk.pack(static_cast<int>(l.platform));
    if (!l.topic.empty()) {
        pk.pack("top");
        pk.pack(l.topic);
    }
}

} // namespace

std::int64_t unixNow() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string encode(const PersistedState& state) {
    // Group as the reference layout nests them; std::map gives a stable, sorted file.
    std::map<dht::InfoHash, std::map<dht::Value::Id, const PermanentPutRecord*>> puts;
    for (const auto& p : state.puts)
        if (p.value)
            puts[p.key][p.value->id] = &p;
    std::map<std::string, std::map<dht::InfoHash, std::vector<const PushListenerRecord*>>> listeners;
    for (const auto& l : state.listeners)
        listeners[l.token][l.key].push_back(&l);

    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> pk(&buffer);
    pk.pack_map(3);
    pk.pack("version");
    pk.pack(kStateFormatVersion);
    pk.pack("puts");
    pk.pack_map(static_cast<std::uint32_t>(puts.size()));
    for (const auto& [key, byId] : puts) {
        key.msgpack_pack(pk);
        pk.pack_array(1);
        pk.pack_map(static_cast<std::uint32_t>(byId.size()));
        for (const auto& [id, put] : byId) {
            pk.pack(id);
            packPut(pk, *put);
        }
    }
    pk.pack("pushListeners");
    pk.pack_map(static_cast<std::uint32_t>(listeners.size()));
    for (const auto& [token, byKey] : listeners) {
        pk.pack(token);
        pk.pack_array(1);
        pk.pack_map(static_cast<std::uint32_t>(byKey.size()));
        for (const auto& [key, list] : byKey) {
            key.msgpack_pack(pk);
            pk.pack_array(static_cast<std::uint32_t>(list.size()));
            for (const auto* l : list)
                packListener(pk, *l);
        }
    }
    return std::string(buffer.data(), buffer.size());
}

LoadResult decode(std::string_view bytes, std::int64_t now) {
    LoadResult out;
    auto fail = [&](const std::string& why) {
        out.state = {};
        out.dropped_expired = 0;
        out.error = errc::state_corrupt;
        out.message = why;
        return out;
    };
    if (bytes.empty())
        return fail("the file is empty");
    // No container can hold more elements than the input has bytes: this bounds what a
    // garbage length prefix can make msgpack allocate.
    std::size_t n = bytes.size();
    msgpack::unpack_limit limit(n, n, n, n, n, 64);
    try {
        std::size_t offset = 0;
        auto handle = msgpack::unpack(bytes.data(), bytes.size(), offset, nullptr, nullptr, limit);
        if (offset != bytes.size())
            return fail(fmt::format("{} unexpected bytes after the state", bytes.size() - offset));
        decodeRoot(handle.get(), now, out);
    } catch (const msgpack::insufficient_bytes&) {
        return fail("the file is truncated");
    } catch (const Corrupt& e) {
        return fail(e.what());
    } catch (const msgpack::parse_error& e) {
        return fail(fmt::format("not a msgpack state file ({})", e.what()));
    } catch (const std::exception& e) {
        return fail(fmt::format("invalid content ({})", e.what()));
    }
    return out;
}

std::error_code save(const std::string& path, const PersistedState& state, std::string* message) {
    std::string bytes;
    try {
        bytes = encode(state);
    } catch (const std::exception& e) { // bad_alloc, or a value libopendht refuses to pack
        if (message)
            *message = fmt::format("cannot encode the state for {}: {}", path, e.what());
        return errc::state_io;
    }
    return writeFileAtomically(path, bytes, message);
}

} // namespace dhtgate::state
