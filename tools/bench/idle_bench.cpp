// W7: idle listen streams. On a freshly started server: opens N streams (one key by default,
// `--keys K` spreads them over K random keys), then measures the server's RSS growth per stream,
// its CPU use over an idle window, and GET / latency on a separate keep-alive connection. Then
// opens more streams up to `--max-streams` (bounded by the open-file limit of this process) and
// reports how many the server held without errors, and GET / latency at that level.
#include "keepalive_client.h"
#include "stream_pool.h"
#include "workloads.h"

#include <algorithm>
#include <iostream>

namespace bench {

namespace {

struct Probe {
    std::vector<double> latencies;
    long errors {0};
};

} // namespace

int runIdle(asio::io_context& io, const Args& args)
{
    const auto ep = endpointOf(args);
    const long nofile = raiseNofileLimit();
    const auto n = static_cast<std::size_t>(args.num("streams", 10000));
    auto maxStreams = static_cast<std::size_t>(args.num("max-streams", static_cast<long>(n)));
    maxStreams = std::min<std::size_t>(std::max(maxStreams, n), static_cast<std::size_t>(std::max(0L, nofile - 64)));
    const int pid = static_cast<int>(args.num("pid", 0));
    const double idleSeconds = args.real("idle", 5);
    const long probes = args.num("probes", 100);
    const double budget = args.real("timeout", 120);
    std::vector<std::string> keys;
    for (long i = 0; i < std::max(1L, args.num("keys", 1)); ++i)
        keys.push_back(randomHex(40));

    StreamPool pool(io, ep, keys, static_cast<std::size_t>(args.num("parallel", 256)));
    asio::steady_timer step(io), guard(io);
    auto client = std::make_shared<KeepAliveClient>(io, ep);
    const std::string getRoot = "GET / HTTP/1.1\r\nHost: " + ep.address().to_string() + "\r\nAccept: */*\r\n\r\n";
    const auto start = Clock::now();
    const long rss0 = processRssKb(pid);
    long rss1 = -1, rss2 = -1;
    double cpu0 = -1, cpu1 = -1, openSeconds = 0, openMaxSeconds = 0;
    std::size_t readyAtN = 0;
    Probe atN, atMax;
    bool finished = false;

    auto finish = [&](const char* why) {
        if (finished)
            return;
        finished = true;
        JsonOut out;
        out.add("workload", std::string("idle")).add("nofile", nofile).add("streams", static_cast<long>(n))
            .add("ready_at_n", static_cast<long>(readyAtN)).add("open_s", openSeconds)
            .add("rss0_kb", rss0).add("rss_n_kb", rss1);
        if (rss0 > 0 && rss1 > 0 && readyAtN > 0)
            out.add("rss_bytes_per_stream", (rss1 - rss0) * 1024.0 / readyAtN);
        if (cpu0 >= 0 && cpu1 >= 0)
            out.add("idle_cpu_pct", (cpu1 - cpu0) * 100.0 / idleSeconds);
        out.addPercentiles("get_ms_at_n", percentiles(atN.latencies), 1e3).add("get_errors_at_n", atN.errors)
            .add("max_streams", static_cast<long>(maxStreams)).add("ready", static_cast<long>(pool.ready()))
            .add("failed", static_cast<long>(pool.failed())).add("refused", static_cast<long>(pool.refused()))
            .add("dropped", static_cast<long>(pool.dropped())).add("open_max_s", openMaxSeconds).add("rss_max_kb", rss2)
            .addPercentiles("get_ms_at_max", percentiles(atMax.latencies), 1e3).add("get_errors_at_max", atMax.errors)
            .add("end", std::string(why));
        std::cout << out.str() << std::endl;
        step.cancel();
        guard.cancel();
        pool.closeAll();
        client->close();
        io.stop();
    };

    // Sequential GET / requests, 20 ms apart, then `then`.
    std::function<void(Probe&, long, std::function<void()>)> probe = [&](Probe& p, long left, std::function<void()> then) {
        if (left == 0)
            return then();
        client->send(getRoot, [&, left, then](int status, double s, const std::string&) {
            if (status == 200)
                p.latencies.push_back(s);
            else
                ++p.errors;
            step.expires_after(std::chrono::milliseconds(20));
            step.async_wait([&, left, then](asio::error_code ec) {
                if (!ec)
                    probe(p, left - 1, then);
            });
        });
    };
    auto after = [&](double seconds, std::function<void()> f) {
        step.expires_after(millis(seconds));
        step.async_wait([f](asio::error_code ec) {
            if (!ec)
                f();
        });
    };
    auto phaseMax = [&]() {
        const auto t = Clock::now();
        pool.open(maxStreams - n, [&, t]() {
            openMaxSeconds = secondsSince(t);
            after(1.0, [&]() {
                rss2 = processRssKb(pid);
                probe(atMax, probes / 2, [&]() { finish("done"); });
            });
        });
    };

    guard.expires_after(millis(budget));
    guard.async_wait([&](asio::error_code ec) {
        if (!ec)
            finish("timeout");
    });
    pool.open(n, [&]() {
        openSeconds = secondsSince(start);
        readyAtN = pool.ready();
        after(1.0, [&]() {
            rss1 = processRssKb(pid);
            cpu0 = processCpuSeconds(pid);
            after(idleSeconds, [&]() {
                cpu1 = processCpuSeconds(pid);
                probe(atN, probes, [&]() {
                    if (maxStreams > n)
                        phaseMax();
                    else
                        finish("done");
                });
            });
        });
    });
    io.run();
    return pool.failed() + pool.refused() + pool.dropped() == 0 ? 0 : 3;
}

} // namespace bench
