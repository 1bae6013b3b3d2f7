// dhtgate-cli: command-line client of an OpenDHT-compatible proxy (dhtgate or dhtnode --proxyserver).
//
//   dhtgate-cli [--url URL] [--ca FILE] [--insecure] [--timeout SECONDS] [-v] COMMAND
//     info                      node info of the proxy (JSON)
//     stats                     proxy statistics (JSON)
//     get KEY                   values stored under KEY, one JSON line each
//     put KEY TEXT [--permanent] store TEXT under KEY; prints the stored value
//     listen KEY                print values as they arrive (and expire) until Ctrl-C
//
// KEY is 40 hex characters or any other string, which is hashed (SHA-1) as the proxy does.
// Exit status: 0 success, 1 the operation failed (unreachable, HTTP error...), 2 bad usage.
#include "codec/value_codec.h"
#include "dhtgate/error.h"
#include "dhtgate/proxy_client.h"

#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>

#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace dhtgate;

namespace {

constexpr int kFailed = 1;
constexpr int kUsage = 2;

void usage(std::ostream& out) {
    out << "usage: dhtgate-cli [--url URL] [--ca FILE] [--insecure] [--timeout SECONDS] [-v] COMMAND\n"
           "commands:\n"
           "  info                         node info of the proxy\n"
           "  stats                        proxy statistics\n"
           "  get KEY                      values stored under KEY (one JSON line each)\n"
           "  put KEY TEXT [--permanent]   store TEXT under KEY\n"
           "  listen KEY                   print values as they arrive, until interrupted\n"
           "KEY: 40 hex characters, or any string (hashed with SHA-1).\n"
           "URL defaults to $DHTGATE_URL, else http://127.0.0.1:8080.\n";
}

int usageError(const std::string& message) {
    std::cerr << "dhtgate-cli: " << message << "\nTry 'dhtgate-cli --help'.\n";
    return kUsage;
}

int failure(const std::string& what, const std::error_code& ec) {
    std::cerr << "dhtgate-cli: " << what << ": " << ec.message() << "\n";
    return kFailed;
}

template <typename T> std::pair<std::error_code, T> wait(std::future<std::pair<std::error_code, T>> f) {
    return f.get(); // every ProxyClient call completes (requests carry a timeout)
}

std::string printable(const dht::Value& v, bool expired = false) {
    return codec::valueJson(v, expired);
}

int runListen(ProxyClient& client, const dht::InfoHash& key) {
    asio::io_context signals;
    asio::signal_set set(signals, SIGINT, SIGTERM);
    set.async_wait([](const std::error_code&, int) {});
    client.listen(key, [](const ProxyClient::Values& values, bool expired) {
        for (const auto& v : values)
            std::cout << printable(*v, expired) << std::endl;
        return true;
    });
    signals.run(); // returns on the first SIGINT/SIGTERM
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    const char* envUrl = std::getenv("DHTGATE_URL");
    std::string url = envUrl && *envUrl ? envUrl : "http://127.0.0.1:8080";
    std::string caFile;
    bool insecure = false, permanent = false, verbose = false;
    long timeoutSeconds = 30;
    std::vector<std::string> positional;

    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto needValue = [&](const char* name) -> const std::string* {
            if (i + 1 >= args.size())
                return nullptr;
            (void)name;
            return &args[++i];
        };
        if (a == "-h" || a == "--help") {
            usage(std::cout);
            return 0;
        } else if (a == "--url") {
            auto v = needValue("--url");
            if (!v)
                return usageError("--url needs a value");
            url = *v;
        } else if (a == "--ca") {
            auto v = needValue("--ca");
            if (!v)
                return usageError("--ca needs a file");
            caFile = *v;
        } else if (a == "--timeout") {
            auto v = needValue("--timeout");
            char* end = nullptr;
            timeoutSeconds = v ? std::strtol(v->c_str(), &end, 10) : 0;
            if (!v || *end || timeoutSeconds <= 0)
                return usageError("--timeout needs a positive number of seconds");
        } else if (a == "--insecure") {
            insecure = true;
        } else if (a == "--permanent") {
            permanent = true;
        } else if (a == "-v" || a == "--verbose") {
            verbose = true;
        } else if (a.size() > 1 && a[0] == '-' && a != "-") {
            return usageError("unknown option " + a);
        } else {
            positional.push_back(a);
        }
    }
    if (positional.empty())
        return usageError("missing command");
    const std::string command = positional[0];
    const std::size_t wantArgs = command == "put" ? 3 : (command == "get" || command == "listen") ? 2 : 1;
    if (command != "info" && command != "stats" && command != "get" && command != "put" && command != "listen")
        return usageError("unknown command '" + command + "'");
    if (positional.size() != wantArgs)
        return usageError("wrong number of arguments for '" + command + "'");
    if (permanent && command != "put")
        return usageError("--permanent only applies to put");

    dht::InfoHash key;
    if (wantArgs >= 2) {
        std::string reason;
        if (!codec::parseKey(positional[1], key, reason))
            return usageError("bad KEY '" + positional[1] + "': " + reason);
    }

    ProxyClientOptions options;
    options.setUrl(url).setRequestTimeout(std::chrono::seconds(timeoutSeconds));
    options.http.setConnectTimeout(std::chrono::seconds(std::min<long>(timeoutSeconds, 10)));
    if (verbose)
        options.setLogger(Logger::toStderr(LogLevel::debug));
    if (insecure)
        options.http.setVerifyPeer(false);
    if (!caFile.empty()) {
        std::ifstream in(caFile);
        if (!in)
            return usageError("cannot read CA file '" + caFile + "'");
        std::ostringstream pem;
        pem << in.rdbuf();
        options.http.setCaPem(pem.str());
    }

    std::unique_ptr<ProxyClient> client;
    try {
        client = std::make_unique<ProxyClient>(options);
    } catch (const std::system_error& e) {
        if (e.code() == errc::invalid_url)
            return usageError("bad URL '" + url + "'");
        std::cerr << "dhtgate-cli: " << e.what() << "\n";
        return kUsage;
    }

    if (command == "info" || command == "listen") {
        std::promise<std::pair<std::error_code, NodeInfo>> p;
        client->nodeInfo([&](std::error_code ec, NodeInfo info) { p.set_value({ec, std::move(info)}); });
        auto [ec, info] = wait(p.get_future());
        if (ec)
            return failure("cannot reach the proxy at " + url, ec);
        if (command == "info") {
            std::cout << info.json << (info.json.empty() || info.json.back() != '\n' ? "\n" : "");
            return 0;
        }
        return runListen(*client, key);
    }
    if (command == "stats") {
        std::promise<std::pair<std::error_code, ProxyStats>> p;
        client->stats([&](std::error_code ec, ProxyStats stats) { p.set_value({ec, std::move(stats)}); });
        auto [ec, stats] = wait(p.get_future());
        if (ec)
            return failure("stats from " + url, ec);
        std::cout << stats.json << (stats.json.empty() || stats.json.back() != '\n' ? "\n" : "");
        return 0;
    }
    if (command == "get") {
        std::promise<std::pair<std::error_code, ProxyClient::Values>> p;
        client->get(key, [&](std::error_code ec, ProxyClient::Values v) { p.set_value({ec, std::move(v)}); });
        auto [ec, values] = wait(p.get_future());
        if (ec)
            return failure("get " + key.toString() + " from " + url, ec);
        for (const auto& v : values)
            std::cout << printable(*v) << "\n";
        return 0;
    }
    // put
    const std::string& text = positional[2];
    auto value = std::make_shared<dht::Value>(dht::ValueType::USER_DATA.id,
                                              reinterpret_cast<const uint8_t*>(text.data()), text.size());
    std::promise<std::pair<std::error_code, std::shared_ptr<dht::Value>>> p;
    client->put(
        key, value,
        [&](std::error_code ec, std::shared_ptr<dht::Value> stored) {
            p.set_value({ec, stored});
        },
        permanent);
    auto [ec, stored] = wait(p.get_future());
    if (ec)
        return failure("put on " + key.toString() + " at " + url, ec);
    std::cout << printable(*stored) << "\n";
    return 0;
}
