#include "push/push_payload.h"

#include "codec/json.h"

#include <algorithm>

namespace dhtgate::push {
namespace {

// Appends `"name":` (names are fixed ASCII literals; callers write members in sorted order).
void name(std::string& out, std::string_view n, bool& first) {
    if (!first)
        out += ',';
    first = false;
    out += '"';
    out += n;
    out += "\":";
}

void stringMember(std::string& out, std::string_view n, std::string_view value, bool& first) {
    name(out, n, first);
    json::appendJsonString(out, value);
}

std::string joinIds(const std::vector<EventValue>& values) {
    std::string ids;
    for (const auto& v : values) {
        if (!ids.empty())
            ids += ',';
        json::appendUint(ids, v.id);
    }
    return ids;
}

const char* priorityText(Priority p) { return p == Priority::high ? "high" : "normal"; }

Data timeoutNotice(std::string_view key, std::string_view client_id, const std::uint64_t* value_id,
                   std::string_view session_id) {
    Data d;
    d.kind = Data::Kind::timeout;
    d.priority = Priority::normal;
    bool first = true;
    d.json = "{";
    stringMember(d.json, "s", session_id, first);
    stringMember(d.json, "timeout", key, first);
    stringMember(d.json, "to", client_id, first);
    if (value_id) {
        std::string vid;
        json::appendUint(vid, *value_id);
        stringMember(d.json, "vid", vid, first);
    }
    d.json += '}';
    return d;
}

void tokensMember(std::string& out, std::string_view token, bool& first) {
    name(out, "tokens", first);
    out += '[';
    json::appendJsonString(out, token);
    out += ']';
}

// {"android":{...},"data":...,"platform":2,"tokens":[...]} or the 2.4.12 form.
void androidNotification(std::string& out, const Data& data, std::string_view token, const GorushOptions& options) {
    bool first = true;
    out += '{';
    if (!options.android_legacy) {
        name(out, "android", first);
        out += "{\"priority\":\"";
        out += priorityText(data.priority);
        out += "\",\"ttl\":\"";
        json::appendInt(out, options.ttl_seconds);
        out += "s\"}";
    }
    name(out, "data", first);
    out += data.json;
    name(out, "platform", first);
    out += '2';
    if (options.android_legacy) {
        stringMember(out, "priority", priorityText(data.priority), first);
        name(out, "time_to_live", first);
        json::appendInt(out, options.ttl_seconds);
    }
    tokensMember(out, token, first);
    out += '}';
}

void iosNotification(std::string& out, const Data& data, std::string_view token, std::string_view topic,
                     std::int64_t now_seconds, const GorushOptions& options) {
    // 3.0.0+ sends expiry notices to iOS as visible alerts too, so the app is woken to refresh.
    bool alert = data.priority == Priority::high || data.kind == Data::Kind::timeout;
    std::string_view effectiveTopic = topic.empty() ? std::string_view(options.bundle_id) : topic;
    bool first = true;
    out += '{';
    if (alert) {
        name(out, "alert", first);
        out += "{\"title\":\"hello\"}";
    } else {
        name(out, "content_available", first);
        out += "true";
    }
    name(out, "data", first);
    out += data.json;
    name(out, "expiration", first);
    json::appendInt(out, now_seconds + options.ttl_seconds);
    if (alert) {
        name(out, "mutable_content", first);
        out += "true";
    }
    name(out, "platform", first);
    out += '1';
    stringMember(out, "priority", alert ? "high" : "normal", first);
    stringMember(out, "push_type", alert ? "alert" : "background", first);
    tokensMember(out, token, first);
    if (!effectiveTopic.empty())
        stringMember(out, "topic", effectiveTopic, first);
    out += '}';
}

} // namespace

bool parseNoneFallback(std::string_view text, NoneFallback& out) {
    if (text == "ios")
        out = NoneFallback::ios;
    else if (text == "android")
        out = NoneFallback::android;
    else if (text == "drop")
        out = NoneFallback::drop;
    else
        return false;
    return true;
}

Data valueNotification(const ValueEvent& event, bool with_ids) {
    Data d;
    d.kind = Data::Kind::value;
    bool anyTopPriority = std::any_of(event.values.begin(), event.values.end(),
                                      [](const EventValue& v) { return v.priority == 0; });
    d.priority = !event.expired && anyTopPriority ? Priority::high : Priority::normal;

    std::string ids = joinIds(event.values);
    bool first = true;
    d.json = "{";
    if (event.expired && !ids.empty())
        stringMember(d.json, "exp", ids, first);
    if (with_ids && !ids.empty())
        stringMember(d.json, "ids", ids, first);
    stringMember(d.json, "key", event.key, first);
    if (std::any_of(event.values.begin(), event.values.end(), [](const EventValue& v) { return !v.push_type.empty(); })) {
        std::string pt;
        for (const auto& v : event.values) {
            if (&v != &event.values.front())
                pt += ',';
            pt += v.push_type;
        }
        stringMember(d.json, "pt", pt, first);
    }
    stringMember(d.json, "s", event.session_id, first);
    name(d.json, "t", first);
    json::appendInt(d.json, event.time_ms);
    stringMember(d.json, "to", event.client_id, first);
    d.json += '}';
    return d;
}

Data listenerTimeout(std::string_view key, std::string_view client_id, std::string_view session_id) {
    return timeoutNotice(key, client_id, nullptr, session_id);
}

Data putTimeout(std::string_view key, std::string_view client_id, std::uint64_t value_id, std::string_view session_id) {
    return timeoutNotice(key, client_id, &value_id, session_id);
}

Data ping(std::string_view client_id) {
    Data d;
    d.kind = Data::Kind::ping;
    d.priority = Priority::high;
    d.json = "{\"pong\":true,\"to\":";
    json::appendJsonString(d.json, client_id);
    d.json += '}';
    return d;
}

std::optional<Request> gorushRequest(const Data& data, std::string_view token, Platform platform, std::string_view topic,
                                     std::int64_t now_seconds, const GorushOptions& options) {
    if (platform == Platform::unifiedpush)
        return std::nullopt;
    if (platform == Platform::none) {
        switch (options.none_as) {
        case NoneFallback::drop: return std::nullopt;
        case NoneFallback::android: platform = Platform::android; break;
        case NoneFallback::ios: platform = Platform::ios; break;
        }
    }
    Request r;
    r.to_gateway = true;
    r.target = "/api/push";
    r.headers = {{"Content-Type", "application/json"}};
    r.body = "{\"notifications\":[";
    if (platform == Platform::android)
        androidNotification(r.body, data, token, options);
    else
        iosNotification(r.body, data, token, topic, now_seconds, options);
    r.body += "]}";
    return r;
}

Request unifiedPushRequest(const Data& data, std::string_view endpoint_url, std::int64_t ttl_seconds) {
    Request r;
    r.to_gateway = false;
    r.target = std::string(endpoint_url);
    std::string ttl;
    json::appendInt(ttl, ttl_seconds);
    r.headers = {{"Content-Type", "application/json"}, {"TTL", ttl}, {"Urgency", priorityText(data.priority)}};
    r.body = data.json;
    return r;
}

std::optional<Request> buildRequest(const Data& data, std::string_view token, Platform platform, std::string_view topic,
                                    std::int64_t now_seconds, const GorushOptions& options) {
    if (platform == Platform::unifiedpush)
        return unifiedPushRequest(data, token, options.ttl_seconds);
    return gorushRequest(data, token, platform, topic, now_seconds, options);
}

} // namespace dhtgate::push
