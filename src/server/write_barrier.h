// Calls a function once every token handed out has been released (from any thread): used to learn
// when the final chunks of many streams have been written.
#pragma once

#include <functional>
#include <memory>

namespace dhtgate::server {

class WriteBarrier {
public:
    explicit WriteBarrier(std::function<void()> done) : state_(std::make_shared<State>(std::move(done))) {}
    /// A callback to hand to one writer; `done` runs when all tokens (and this barrier) are gone.
    std::function<void()> token() const {
        return [s = state_] {};
    }

private:
    struct State {
        explicit State(std::function<void()> f) : done(std::move(f)) {}
        ~State() {
            if (done)
                done();
        }
        std::function<void()> done;
    };
    std::shared_ptr<State> state_;
};

} // namespace dhtgate::server
