#include "client/proxy_json.h"

#include "codec/json.h"

namespace dhtgate::detail {
namespace {

std::uint64_t counter(const json::Value& obj, std::string_view name) {
    const json::Value* v = obj.find(name);
    if (!v || !v->isNumber())
        return 0;
    std::uint64_t out = 0;
    if (v->getUint64(out))
        return out;
    return v->asDouble() > 0 ? static_cast<std::uint64_t>(v->asDouble()) : 0;
}

std::string text(const json::Value& obj, std::string_view name) {
    const json::Value* v = obj.find(name);
    return v && v->isString() ? v->asString() : std::string{};
}

NodeInfo::Family family(const json::Value& obj, std::string_view name) {
    NodeInfo::Family f;
    if (const json::Value* v = obj.find(name); v && v->isObject()) {
        f.good = counter(*v, "good");
        f.dubious = counter(*v, "dubious");
        f.incoming = counter(*v, "incoming");
    }
    return f;
}

bool fromObject(const json::Value& obj, NodeInfo& out) {
    const json::Value* nodeId = obj.find("node_id");
    if (!obj.isObject() || !nodeId || !nodeId->isString())
        return false;
    out.nodeId = nodeId->asString();
    out.id = text(obj, "id");
    out.publicIp = text(obj, "public_ip");
    out.ops = counter(obj, "ops");
    out.ipv4 = family(obj, "ipv4");
    out.ipv6 = family(obj, "ipv6");
    return true;
}

// Bodies end with "\n"; the strict reader accepts surrounding whitespace.
bool parseObject(std::string_view body, json::Value& out) {
    json::Error err;
    return json::parse(body, out, err) && out.isObject();
}

} // namespace

bool parseNodeInfo(std::string_view body, NodeInfo& out) {
    json::Value doc;
    if (!parseObject(body, doc) || !fromObject(doc, out))
        return false;
    out.json = std::string(body);
    return true;
}

bool parseStats(std::string_view body, ProxyStats& out) {
    json::Value doc;
    if (!parseObject(body, doc))
        return false;
    out.listenCount = counter(doc, "listenCount");
    out.putCount = counter(doc, "putCount");
    out.totalPermanentPuts = counter(doc, "totalPermanentPuts");
    out.pushListenersCount = counter(doc, "pushListenersCount");
    if (const json::Value* rate = doc.find("requestRate"); rate && rate->isNumber())
        out.requestRate = rate->asDouble();
    if (const json::Value* info = doc.find("nodeInfo"); info && info->isObject()) {
        NodeInfo n;
        if (fromObject(*info, n))
            out.nodeInfo = std::move(n);
    }
    out.json = std::string(body);
    return true;
}

} // namespace dhtgate::detail
