// W5: put throughput. `--concurrency C` keep-alive connections each send POST /key/<h> one after
// the other for `--duration` seconds. Modes: `newid` (one key, "id":"0": a new value each time),
// `sameid` (one key, one fixed id, changing data: an edit/refresh of the same value), `freshkey`
// (a new random key per request). Reports requests, rate, latency and counts by status; with
// `--pid`, the server CPU used between the first request and the last answer.
#include "keepalive_client.h"
#include "workloads.h"

#include <iostream>
#include <map>

namespace bench {

int runPut(asio::io_context& io, const Args& args)
{
    const auto ep = endpointOf(args);
    const std::string mode = args.str("mode", "newid");
    if (mode != "newid" && mode != "sameid" && mode != "freshkey") {
        std::cerr << "listen_load put: --mode newid|sameid|freshkey\n";
        return 2;
    }
    const auto concurrency = static_cast<std::size_t>(args.num("concurrency", 20));
    const double duration = args.real("duration", 3);
    const int pid = static_cast<int>(args.num("pid", 0));
    const std::string key = args.str("key", randomHex(40));
    const std::string fixedId = std::to_string(1000000 + (std::hash<std::string> {}(randomHex(8)) % 1000000));

    std::vector<std::shared_ptr<KeepAliveClient>> clients;
    std::map<int, long> byStatus;
    std::vector<double> latencies;
    std::size_t active = 0;
    bool finished = false;
    asio::steady_timer guard(io);
    const double cpu0 = processCpuSeconds(pid);
    const auto start = Clock::now();
    double elapsed = 0, cpu1 = -1;

    auto finish = [&](const char* why) {
        if (finished)
            return;
        finished = true;
        elapsed = secondsSince(start);
        cpu1 = processCpuSeconds(pid);
        JsonOut status;
        long total = 0;
        for (auto& [code, count] : byStatus) {
            status.add(std::to_string(code), count);
            total += count;
        }
        JsonOut out;
        out.add("workload", std::string("put")).add("mode", mode).add("concurrency", static_cast<long>(concurrency))
            .add("requests", total).add("seconds", elapsed).add("rps", total / elapsed)
            .add("in_flight_at_end", static_cast<long>(active)).addRaw("status", status.str())
            .addPercentiles("latency_ms", percentiles(latencies), 1e3).add("end", std::string(why));
        if (pid > 0 && cpu0 >= 0 && total > 0)
            out.add("cpu_s", cpu1 - cpu0).add("cpu_us_per_request", (cpu1 - cpu0) * 1e6 / total);
        std::cout << out.str() << std::endl;
        guard.cancel();
        for (auto& c : clients)
            c->close();
        io.stop();
    };

    long counter = 0;
    std::function<void(std::size_t)> next = [&](std::size_t i) {
        if (finished)
            return;
        if (secondsSince(start) >= duration) {
            if (--active == 0)
                finish("done");
            return;
        }
        const std::string marker = randomMarker();
        std::string request;
        if (mode == "newid")
            request = postRequest(key, valueJson(marker, "0"));
        else if (mode == "sameid")
            request = postRequest(key, valueJson(marker, fixedId));
        else
            request = postRequest(randomHex(40), valueJson(marker, "0"));
        ++counter;
        clients[i]->send(std::move(request), [&, i](int status, double s, const std::string&) {
            ++byStatus[status];
            latencies.push_back(s);
            next(i);
        });
    };

    guard.expires_after(millis(duration + args.real("grace", 15)));
    guard.async_wait([&](asio::error_code ec) {
        if (!ec)
            finish("timeout");
    });
    for (std::size_t i = 0; i < concurrency; ++i) {
        clients.push_back(std::make_shared<KeepAliveClient>(io, ep));
        ++active;
        next(i);
    }
    io.run();
    return byStatus.count(200) ? 0 : 3;
}

} // namespace bench
