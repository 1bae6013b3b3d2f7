// GET / and /node/info (spec §3.2), GET /node/stats (§3.3): computed on request (node info at most
// 1 s old), never from a stale periodic snapshot.
#include "server/handlers.h"

#include "dhtgate/proxy_server.h"
#include "server/get_operations.h"
#include "server/listen_registry.h"
#include "server/permanent_puts.h"
#include "server/push_listeners.h"
#include "server/push_service.h"
#include "server/server_context.h"

#include <fmt/format.h>

namespace dhtgate::server {
namespace {

/// How the routing-table counters are reported (spec §11.3, docs/server.md). A 2.x client is
/// "connected" when some family reports good nodes, holds its operations while only dubious
/// nodes are reported ("connecting"), and runs them when everything is zero ("disconnected").
enum class Report {
    real,        ///< the node has good nodes: the real counters
    standalone,  ///< the node knows no peer at all: usable on its own, reported as one good node
    hideDubious, ///< only dubious nodes (joining): zero of both, so clients do not hold their ops
};

Report reportFor(const dht::NodeInfo& info) {
    if (info.ipv4.good_nodes + info.ipv6.good_nodes > 0)
        return Report::real;
    return info.ipv4.getKnownNodes() + info.ipv6.getKnownNodes() == 0 ? Report::standalone : Report::hideDubious;
}

void appendFamily(std::string& out, const dht::NodeStats& s, Report report, bool standaloneFamily) {
    const unsigned good = report == Report::standalone && standaloneFamily ? 1 : s.good_nodes;
    const unsigned dubious = report == Report::real ? s.dubious_nodes : 0;
    fmt::format_to(std::back_inserter(out), "{{\"dubious\":{},\"good\":{},\"incoming\":{}", dubious, good,
                   s.incoming_nodes);
    if (s.table_depth > 1)
        fmt::format_to(std::back_inserter(out), ",\"network_size_estimation\":{},\"table_depth\":{}",
                       s.getNetworkSizeEstimation(), s.table_depth);
    out += '}';
}

/// "id": the proxy identity's public-key id when the server has one (§3.2), else the node's.
/// Everything up to "ops" (the per-client "public_ip" follows it).
std::string nodeInfoHead(const dht::NodeInfo& info, const ServerConfig& config) {
    const auto report = reportFor(info);
    std::string out = "{";
    const auto id = config.identity && config.identity->second ? config.identity->second->getId() : info.id;
    if (id)
        fmt::format_to(std::back_inserter(out), "\"id\":\"{}\",", id.toString());
    out += "\"ipv4\":";
    appendFamily(out, info.ipv4, report, info.bound4 != 0 || info.bound6 == 0);
    out += ",\"ipv6\":";
    appendFamily(out, info.ipv6, report, info.bound6 != 0 && info.bound4 == 0);
    fmt::format_to(std::back_inserter(out), ",\"node_id\":\"{}\",\"ops\":{}", info.node_id.toString(),
                   info.ongoing_ops);
    return out;
}

std::string nodeInfoTail() { return fmt::format(",\"version\":\"{}\"}}", versionString()); }

std::string nodeInfoJson(const dht::NodeInfo& info, const ServerConfig& config) {
    return nodeInfoHead(info, config) + nodeInfoTail();
}

/// The GET / answer: the cached head and tail around this client's address.
void replyNodeInfo(ServerContext& ctx, const dht::NodeInfo& info, const Request& req) {
    auto& cache = ctx.nodeInfoBodyCache();
    if (cache.generation != ctx.nodeInfoGeneration() || cache.head.empty()) {
        cache.head = nodeInfoHead(info, ctx.config());
        cache.tail = nodeInfoTail() + '\n';
        cache.generation = ctx.nodeInfoGeneration();
    }
    const std::string& ip = req.remoteAddress();
    std::string body;
    body.reserve(cache.head.size() + ip.size() + cache.tail.size() + 16);
    body += cache.head;
    body += ",\"public_ip\":\"";
    body += ip;
    body += '"';
    body += cache.tail;
    req.reply(200, std::move(body));
}

} // namespace

void handleNodeInfo(ServerContext& ctx, const Request& req) {
    if (const auto* info = ctx.freshNodeInfo())
        return replyNodeInfo(ctx, *info, req); // the common case: no callback, no allocation
    std::weak_ptr<ServerContext> weak = ctx.shared_from_this();
    ctx.withNodeInfo([weak, req](const dht::NodeInfo* info) {
        auto ctx = weak.lock();
        if (!info || !ctx)
            return req.replyError(503, "Incorrect DhtRunner");
        replyNodeInfo(*ctx, *info, req);
    });
}

void handleStats(ServerContext& ctx, const Request& req) {
    std::weak_ptr<ServerContext> weak = ctx.shared_from_this();
    ctx.withNodeInfo([weak, req](const dht::NodeInfo* info) {
        auto ctx = weak.lock();
        if (!ctx)
            return;
        auto& st = ctx->stats();
        const auto now = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(now - st.lastSnapshot).count();
        const double rate = elapsed > 0 ? double(st.requests - st.lastRequests) / elapsed : 0.0;
        st.lastRequests = st.requests;
        st.lastSnapshot = now;
        const auto unixNow = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
        std::string out = fmt::format("{{\"dhtGetCount\":{},\"getCount\":{},\"lastUpdated\":{},\"listenCount\":{},\"listenKeyCount\":{}",
                                      ctx->gets().dhtGetCount(), ctx->gets().count(), unixNow, ctx->listens().streamCount(),
                                      ctx->listens().dhtListenCount());
        if (info)
            out += ",\"nodeInfo\":" + nodeInfoJson(*info, ctx->config());
        out += ',';
        if (auto* push = ctx->pushListeners().service())
            push->appendStats(out);
        fmt::format_to(std::back_inserter(out),
                       "\"pushListenersCount\":{},\"putCount\":{},\"requestRate\":{:.3f},\"serverStartTime\":{},"
                       "\"totalPermanentPuts\":{}}}\n",
                       ctx->pushListeners().tokenCount(), ctx->puts().keyCount(), rate, st.startTime, ctx->puts().valueCount());
        req.reply(200, std::move(out));
    });
}

} // namespace dhtgate::server
