#include "support/push_capture.h"

#include "codec/json.h"

namespace dhtgate::test {
namespace {

std::string scalarText(const json::Value& v) {
    switch (v.type()) {
    case json::Type::String: return v.asString();
    case json::Type::Bool: return v.asBool() ? "true" : "false";
    case json::Type::Number: {
        std::int64_t i;
        if (v.getInt64(i))
            return std::to_string(i);
        return std::to_string(v.asDouble());
    }
    default: return "?";
    }
}

void flatten(const json::Value& obj, std::map<std::string, std::string>& out) {
    for (const auto& m : obj.members())
        out[m.name] = scalarText(m.value);
}

} // namespace

std::optional<CapturedPush> parsePush(const HttpReceiver::Received& r) {
    json::Value doc;
    json::Error err;
    if (!json::parse(r.body, doc, err) || !doc.isObject())
        return std::nullopt;
    CapturedPush p;
    p.target = r.target;
    const auto* notifications = doc.find("notifications");
    if (!notifications) { // UnifiedPush: the body is the payload
        flatten(doc, p.data);
        p.priority = r.header("urgency");
        return p;
    }
    if (!notifications->isArray() || notifications->items().empty())
        return std::nullopt;
    const auto& n = notifications->items().front();
    if (const auto* tokens = n.find("tokens"); tokens && tokens->isArray() && !tokens->items().empty())
        p.token = tokens->items().front().asString();
    if (const auto* platform = n.find("platform"))
        p.platform = scalarText(*platform);
    if (const auto* android = n.find("android"); android && android->find("priority"))
        p.priority = android->find("priority")->asString();
    else if (const auto* priority = n.find("priority"))
        p.priority = priority->asString();
    if (const auto* data = n.find("data"); data && data->isObject())
        flatten(*data, p.data);
    return p;
}

std::vector<CapturedPush> capturedPushes(const HttpReceiver& receiver) {
    std::vector<CapturedPush> out;
    for (const auto& r : receiver.requests())
        if (auto p = parsePush(r))
            out.push_back(std::move(*p));
    return out;
}

std::string subscribeBody(const std::string& token, const std::string& platform, const std::string& clientId,
                          const std::string& sessionId, bool refresh) {
    std::string body = "{\"client_id\":\"" + clientId + "\",\"key\":\"" + token + "\",\"platform\":\"" + platform + "\"";
    if (refresh)
        body += ",\"refresh\":true";
    return body + ",\"session_id\":\"" + sessionId + "\"}";
}

} // namespace dhtgate::test
