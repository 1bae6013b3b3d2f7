#include "server/listen_registry.h"

#include "codec/value_codec.h"
#include "server/push_listeners.h"
#include "server/raw_stream.h"
#include "server/server_context.h"

#include <opendht/dhtrunner.h>

namespace dhtgate::server {

ListenRegistry::~ListenRegistry() = default;

void ListenRegistry::add(const dht::InfoHash& key, std::uint64_t connId, Stream stream) {
    auto [it, isNewKey] = keys_.try_emplace(key);
    auto& kl = it->second;
    kl.connections.insert(connId);
    auto& session = sessions_[connId];
    session.key = key;
    session.stream = std::move(stream);
    if (isNewKey) {
        startDhtListen(key, kl);
    } else {
        // Join the shared DHT listen: first what is already stored, one value per chunk.
        for (const auto& [id, e] : kl.current)
            session.stream.send(e.line, e.framed);
    }
    ctx_.log().debug("[server] [conn:{}] listen {} ({} stream(s) on this key)", connId, key.toString(),
                     kl.connections.size());
}

void ListenRegistry::startDhtListen(const dht::InfoHash& key, KeyListen& kl) {
    kl.generation = nextGeneration_++;
    std::weak_ptr<ServerContext> weak = ctx_.shared_from_this();
    const auto generation = kl.generation;
    // Runs on the DHT thread: serialise each value once here, then hop to the state executor.
    kl.token = ctx_.dht()
                   .listen(key,
                           [weak, key, generation](const std::vector<std::shared_ptr<dht::Value>>& values, bool expired) {
                               auto ctx = weak.lock();
                               if (!ctx)
                                   return false;
                               std::vector<Event> events;
                               events.reserve(values.size());
                               for (const auto& v : values)
                                   if (v)
                                       events.push_back(makeEvent(*v, expired));
                               ctx->postFromAnyThread([ctx, key, generation, events = std::move(events), expired] {
                                   ctx->listens().onEvents(key, generation, events, expired);
                               });
                               return true;
                           })
                   .share();
}

ListenRegistry::Event ListenRegistry::makeEvent(const dht::Value& value, bool expired) {
    std::string line;
    codec::appendValueJson(line, value, expired);
    line += '\n';
    auto framed = RawStream::frame(line);
    return {value.id, std::make_shared<const std::string>(std::move(line)), std::move(framed)};
}

void ListenRegistry::onEvents(const dht::InfoHash& key, std::uint64_t generation, const std::vector<Event>& events,
                              bool expired) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.generation != generation)
        return; // a late event of a cancelled listen
    auto& kl = it->second;
    ctx_.log().trace("[server] [listen] {} event: {} value(s){}", key.toString(), events.size(), expired ? " expired" : "");
    for (const auto& e : events) {
        if (expired) {
            kl.current.erase(e.id);
        } else {
            auto& current = kl.current[e.id];
            if (current.line && *current.line == *e.line)
                continue; // already sent (e.g. reported by notifyLocalPut first)
            current = e;
        }
        for (auto connId : kl.connections) {
            auto s = sessions_.find(connId);
            if (s != sessions_.end())
                s->second.stream.send(e.line, e.framed);
        }
    }
}

void ListenRegistry::notifyLocalPut(const dht::InfoHash& key, const dht::Value& value) {
    ctx_.pushListeners().notifyLocalPut(key, value);
    auto it = keys_.find(key);
    if (it == keys_.end())
        return;
    onEvents(key, it->second.generation, {makeEvent(value, false)}, false);
}

void ListenRegistry::connectionClosed(std::uint64_t connId) {
    auto s = sessions_.find(connId);
    if (s == sessions_.end())
        return;
    const auto key = s->second.key;
    sessions_.erase(s); // the stream's end() goes nowhere: the connection is closed
    auto it = keys_.find(key);
    if (it == keys_.end())
        return;
    it->second.connections.erase(connId);
    ctx_.log().debug("[server] [conn:{}] listen {} closed", connId, key.toString());
    if (it->second.connections.empty()) {
        ctx_.dht().cancelListen(key, it->second.token);
        keys_.erase(it);
    }
}

void ListenRegistry::shutdown(const std::function<void()>& barrierToken) {
    for (auto& [connId, session] : sessions_)
        session.stream.end(barrierToken);
    sessions_.clear();
    for (auto& [key, kl] : keys_)
        ctx_.dht().cancelListen(key, kl.token);
    keys_.clear();
}

} // namespace dhtgate::server
