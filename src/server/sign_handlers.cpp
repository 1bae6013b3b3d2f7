// POST /key/:hash/sign and /key/:hash/encrypt (spec §3.11, §9) with the server identity
// (ServerConfig::identity). Without an identity both answer 501 (router.cpp).
//
// sign: id kept (random when absent), a DHT get filtered on that id finds the highest seq of a
// value with the same id; the value gets owner = server key, seq above it, a signature; plain put.
// encrypt: the recipient's certificate (type 8 value under the recipient's key id) is fetched from
// the DHT, the value is addressed, signed and encrypted for it and the cypher value is put; the
// answer echoes the cleartext value. DHT callbacks run on the DHT thread and hop back to the
// state executor (the same pattern as put_handler.cpp).
#include "server/handlers.h"

#include "codec/value_codec.h"
#include "server/get_operations.h"
#include "server/server_context.h"

#include <opendht/dhtrunner.h>

#include <random>

namespace dhtgate::server {
namespace {

constexpr dht::ValueType::Id kCertificateType = 8; // spec §9: certificates stored under the key id

dht::Value::Id randomId() {
    static thread_local std::mt19937_64 rng {std::random_device {}()};
    dht::Value::Id id = 0;
    while (id == dht::Value::INVALID_ID)
        id = rng();
    return id;
}

/// Parses the body; answers the error itself and returns null on failure.
std::shared_ptr<dht::Value> parseBody(ServerContext& ctx, const Request& req) {
    const auto& body = req.body();
    if (body.empty()) {
        req.replyError(400, "Missing parameters");
        return nullptr;
    }
    codec::ParseError err;
    auto parsed = codec::parsePut(body, ctx.config().max_value_size, err);
    if (!parsed) {
        req.replyError(err.status, err.reason);
        return nullptr;
    }
    if (parsed->value->isEncrypted()) {
        req.replyError(400, "Value already encrypted");
        return nullptr;
    }
    if (parsed->value->id == dht::Value::INVALID_ID)
        parsed->value->id = randomId();
    return std::move(parsed->value);
}

/// Runs `then(ctx, req)` on the state executor once the DHT put is done.
void putThenAnswer(ServerContext& ctx, const Request& req, const dht::InfoHash& key,
                   std::shared_ptr<dht::Value> stored, std::string answer) {
    std::weak_ptr<ServerContext> weak = ctx.shared_from_this();
    const auto parked = ctx.park(req);
    ctx.gets().keyChanged(key);
    ctx.dht().put(key, stored, [weak, parked, answer = std::move(answer)](bool ok, const std::vector<std::shared_ptr<dht::Node>>& nodes) {
        auto ctx = weak.lock();
        if (!ctx)
            return;
        // A standalone node stores locally and reports no node: a success (as in put_handler.cpp).
        const bool success = ok || nodes.empty();
        ctx->postFromAnyThread([ctx, parked, answer, success] {
            if (auto req = ctx->unpark(parked))
                success ? req->reply(200, answer) : req->replyError(502, "Put failed");
        });
    });
}

} // namespace

void handleSign(ServerContext& ctx, const Request& req, const dht::InfoHash& key) {
    const auto identity = ctx.config().identity;
    auto value = parseBody(ctx, req);
    if (!value)
        return;
    std::weak_ptr<ServerContext> weak = ctx.shared_from_this();
    const auto parked = ctx.park(req);
    auto maxSeq = std::make_shared<std::optional<std::uint16_t>>();
    ctx.dht().get(
        key,
        [maxSeq](const std::vector<std::shared_ptr<dht::Value>>& values) {
            for (const auto& v : values)
                if (v->owner && (!*maxSeq || v->seq > **maxSeq))
                    *maxSeq = v->seq;
            return true;
        },
        [weak, parked, key, value, maxSeq, identity](bool, const std::vector<std::shared_ptr<dht::Node>>&) {
            auto ctx = weak.lock();
            if (!ctx)
                return;
            ctx->postFromAnyThread([ctx, parked, key, value, maxSeq, identity] {
                auto req = ctx->unpark(parked);
                if (!req)
                    return;
                if (*maxSeq && value->seq <= **maxSeq)
                    value->seq = static_cast<std::uint16_t>(**maxSeq + 1);
                try {
                    value->sign(*identity->first);
                } catch (const std::exception& e) {
                    ctx->log().warn("[server] sign failed: {}", e.what());
                    return req->replyError(500, "Signing failed");
                }
                putThenAnswer(*ctx, *req, key, value, codec::valueJson(*value) + '\n');
            });
        },
        dht::Value::IdFilter(value->id));
}

void handleEncrypt(ServerContext& ctx, const Request& req, const dht::InfoHash& key) {
    const auto identity = ctx.config().identity;
    auto value = parseBody(ctx, req);
    if (!value)
        return;
    const auto to = value->recipient;
    if (!to)
        return req.replyError(400, "No destination found");
    std::weak_ptr<ServerContext> weak = ctx.shared_from_this();
    const auto parked = ctx.park(req);
    auto cert = std::make_shared<std::shared_ptr<dht::crypto::Certificate>>();
    ctx.dht().get(
        to,
        [cert, to](const std::vector<std::shared_ptr<dht::Value>>& values) {
            for (const auto& v : values) {
                try {
                    auto c = std::make_shared<dht::crypto::Certificate>(v->data);
                    if (c->getId() == to) {
                        *cert = std::move(c);
                        return false; // found: stop
                    }
                } catch (const std::exception&) { // not a certificate: ignore
                }
            }
            return true;
        },
        [weak, parked, key, value, cert, identity, to](bool, const std::vector<std::shared_ptr<dht::Node>>&) {
            auto ctx = weak.lock();
            if (!ctx)
                return;
            ctx->postFromAnyThread([ctx, parked, key, value, cert, identity, to] {
                auto req = ctx->unpark(parked);
                if (!req)
                    return;
                if (!*cert)
                    return req->replyError(502, "Recipient certificate not found");
                std::shared_ptr<dht::Value> cypher;
                try {
                    cypher = std::make_shared<dht::Value>(value->encrypt(*identity->first, (*cert)->getPublicKey()));
                } catch (const std::exception& e) {
                    ctx->log().warn("[server] encrypt for {} failed: {}", to.toString(), e.what());
                    return req->replyError(502, "Encryption failed");
                }
                // The answer echoes the cleartext value (now addressed and signed), §9.
                putThenAnswer(*ctx, *req, key, cypher, codec::valueJson(*value) + '\n');
            });
        },
        dht::Value::TypeFilter(kCertificateType));
}

} // namespace dhtgate::server
