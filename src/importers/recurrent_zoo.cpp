// Recurrent models. lstm-lm is the "large" word-level LSTM language model of Zaremba, Sutskever & Vinyals 2014
// ("Recurrent Neural Network Regularization") on Penn Treebank, as in PyTorch's word_language_model example.
#include "graph/builder.hpp"
#include "importers/zoo.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

Model lstm_lm(const ModelInputs& in) {
    const std::int64_t vocab = 10000, hidden = 1500;
    const double dropout = 0.65;
    ModelBuilder b("lstm-lm", {in.batch, in.seq}, infer_shape);  // token ids
    b.add("embedding", "encoder", {{"num_embeddings", vocab}, {"embedding_dim", hidden}});
    b.add("dropout", "drop.0", {{"p", dropout}});
    // nn.LSTM(1500, 1500, num_layers=2, dropout=0.65): two stacked layers with dropout between them, written
    // as two one-layer LSTMs so the dropout between them is costed too (same parameters).
    b.add("lstm", "rnn.0", {{"hidden", hidden}, {"layers", 1}});
    b.add("dropout", "drop.1", {{"p", dropout}});
    b.add("lstm", "rnn.1", {{"hidden", hidden}, {"layers", 1}});
    b.add("dropout", "drop.2", {{"p", dropout}});
    b.add("linear", "decoder", {{"out_features", vocab}});  // untied
    b.add("cross_entropy", "loss");
    return b.finish("language", in.seq);
}

}  // namespace

std::vector<ZooEntry> recurrent_zoo() {
    return {
        ZooEntry{"lstm-lm", "language",
                 "word-level LSTM language model, 2 x 1500 LSTM, vocab 10k, 66M params (Zaremba et al. 2014, "
                 "'large' Penn Treebank model)",
                 35, 0, lstm_lm},
    };
}

}  // namespace prenet
