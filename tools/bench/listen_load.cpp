// listen_load: the load client for what ab and wrk cannot do (dhtgate benchmark, W5-W7).
//
//   listen_load fanout --url http://127.0.0.1:P [--streams 1000] [--pid SERVER_PID] [--timeout 30]
//   listen_load idle   --url ... [--streams 10000] [--max-streams 19900] [--idle 5] [--pid P]
//   listen_load put    --url ... [--mode newid|sameid|freshkey] [--concurrency 20] [--duration 3] [--pid P]
//
// Common options: --parallel N (connection attempts in flight, default 256), --key HEX40.
// Each run prints one JSON line with its results. The open-file limit is raised to the hard
// maximum at start. Every run is bounded in time.
#include "workloads.h"

#include <iostream>

namespace bench {

asio::ip::tcp::endpoint endpointOf(const Args& args)
{
    const HostPort hp = parseUrl(args.str("url", "http://127.0.0.1:8080"));
    return {asio::ip::make_address(hp.host), hp.port};
}

std::string randomMarker()
{
    static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::string hex = randomHex(48);
    std::string m;
    for (std::size_t i = 0; i < 24; ++i)
        m += alphabet[std::stoi(hex.substr(2 * i, 2), nullptr, 16) % 62];
    return m;
}

std::string valueJson(const std::string& marker, const std::string& id)
{
    return R"({"data":")" + marker + R"(","id":")" + id + R"(","type":0})";
}

std::string postRequest(const std::string& key, const std::string& body)
{
    return "POST /key/" + key + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\nContent-Type: application/json\r\n"
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

} // namespace bench

int main(int argc, char** argv)
{
    using namespace bench;
    const std::string usage = "usage: listen_load fanout|idle|put --url http://127.0.0.1:PORT [--pid SERVER_PID] [options]\n";
    if (argc < 2) {
        std::cerr << usage;
        return 2;
    }
    const std::string workload = argv[1];
    Args args(argc, argv, 2);
    if (!args.ok()) {
        std::cerr << usage;
        return 2;
    }
    raiseNofileLimit();
    try {
        asio::io_context io(1);
        if (workload == "fanout")
            return runFanout(io, args);
        if (workload == "idle")
            return runIdle(io, args);
        if (workload == "put")
            return runPut(io, args);
    } catch (const std::exception& e) {
        std::cerr << "listen_load: " << e.what() << "\n";
        return 1;
    }
    std::cerr << usage;
    return 2;
}
