#pragma once
// The option table: every option a request or a command line can carry, declared once with its type, unit,
// range, default, help and the commands that take it. The CLI's parser and `--help`, the API's reader and
// validation, the `settings` echo and the page's form, URL state and command line (through
// {"command": "options"}) all come from this table, so adding an option is one row plus the code that uses it.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace prenet {

// What an option's value is, which decides how the CLI reads it and how the API checks it.
enum class OptionType {
    count,     // a positive whole number (the CLI accepts 2e12)
    number,    // a finite real number in [min, max] (min excluded when min_exclusive)
    choice,    // one of `choices`
    flag,      // true or false; a CLI switch without a value
    model,     // a zoo id, a Hugging Face config.json or a layers JSON document (the CLI reads a file)
    hardware,  // an id, "all", a spec sheet or a list of those (the CLI takes ids and spec files, comma-separated)
    sheets,    // a list of spec sheets (API only: the CLI passes spec files in --hardware)
    document,  // a JSON document the CLI reads from a file
    rows,      // measured rows: a list of objects or CSV text (the CLI reads a .json or .csv file)
    text,      // a word the option's reader parses (a network such as 8x400g-ib)
    path,      // a file or folder name (CLI only)
    list,      // comma-separated words (CLI only)
};

const char* to_string(OptionType type);

// The commands, as bits: an option lists those that take it.
enum CommandBit : unsigned {
    kPredict = 1u << 0,
    kFeatures = 1u << 1,
    kKernels = 1u << 2,
    kFit = 1u << 3,
    kListing = 1u << 4,  // zoo, hardware, layers, options
    kCalibrate = 1u << 5,
    kEveryCommand = kPredict | kFeatures | kKernels | kFit | kListing | kCalibrate,
};

struct CommandDef {
    const char* name;
    unsigned bit;
    bool api;              // handled by handle_request (kernels, fit: api/kernels_command.hpp, api/fit_command.hpp)
    const char* summary;   // one line for `prenet --help`
    const char* synopsis;  // the usage line after `prenet <name>`
    const char* epilogue;  // what the help adds after the options
};
const std::vector<CommandDef>& command_table();
const CommandDef* find_command(const std::string& name);  // null if none

struct OptionDef {
    std::string name;  // the request key ("grad_accum"); CLI-only options have one too, for the table
    std::string flag;  // the CLI flag without dashes ("grad-accum"); empty: API only
    OptionType type = OptionType::flag;
    std::string metavar;  // what --help shows after the flag ("N", "P")
    std::string label;    // the page's field label
    std::string unit;     // of the value ("samples", "USD per hour"); empty if none
    double min = 0, max = 0;  // count and number options
    bool min_exclusive = false;
    std::vector<std::string> choices;  // choice options
    // A text option's own reading, run where the value is checked (check_option), so that its error names the
    // option as the user gave it (--network, 'network', cluster.network) rather than where it is used later.
    // Throws Error; the text is read again where it is used.
    std::function<void(const std::string& text, const std::string& spelling)> check_text;
    // A flag that may be followed by one of these words (`--checkpointing selective`); alone it means true.
    std::vector<std::string> switch_values;
    // The word among switch_values that the bare flag means (checkpointing's "full"), else empty.
    std::string switch_bare;
    // A key a cluster document may hold (`--cluster cluster.json`, the `cluster` request key).
    bool may_be_in_cluster_document = false;
    // The row that is the cluster document itself: its keys are other rows' options.
    bool is_the_cluster_document = false;
    // When giving this option makes the request a cluster question (Settings::parallel), as the options reply
    // serves it (`cluster_question`), so the page asks what the API reads: null never; "given" (any value);
    // {"above": N} (a count above N); {"is": "word"} (that word). Read by asks_cluster.
    nlohmann::json cluster_question;
    // A dimension of a plan's layout (dp, tp, ..., the schedule): the key a reply's plan and this row share, so
    // pinning a plan sets these rows (the options reply's `layout`).
    bool layout = false;
    // The row applies only while each named option has one of these values (lora_rank with finetune lora or
    // qlora): the API refuses it otherwise (settings.cpp, through check_applies), and the page neither shows nor
    // sends it (the options reply's `applies_with`).
    std::map<std::string, std::vector<std::string>> applies_with;
    // The row is a choice only while each named option has one of these values: elsewhere the API takes just
    // the one value those options fix (fp8's and LoRA's recipe is a half model; QLoRA's base is NF4, a full
    // model's none), checked by settings.cpp's value rules, and the page neither shows nor sends it (the
    // options reply's `choice_with`).
    std::map<std::string, std::vector<std::string>> choice_with;
    std::map<std::string, std::string> choice_labels;  // what the page shows for a choice (default: the choice)
    // The default while each named option has one of these values, over any default the page keeps for itself
    // (a fine-tune's micro-batch: the API's 1, not the page's pre-training 8); the options reply's
    // `default_with`: {"when": {option: [values]}, "value": v}. The API's own default is `default_value`.
    std::map<std::string, std::vector<std::string>> default_when;
    nlohmann::json default_when_value;
    nlohmann::json default_value;      // null: decided by the model or other options (default_text says how)
    std::string default_text;          // the default in words, for --help and the page's placeholder
    // Non-empty: on a cluster question a blank value is not the default but the plan search's choice (the
    // micro-batch: LayoutRequest::micro_batch unset), said in these words; the page then sends no value of its
    // own (the options reply's `cluster_default_text`).
    std::string cluster_default_text;
    std::string help;
    unsigned commands = 0;  // CommandBit
    bool api = true;        // a request key of handle_request
    bool echo = false;      // reported with its value used in the reply's `settings`
    // Where the page offers it: "training" (a field of the training form), "model", "hardware", "results",
    // or empty with `page_note` saying why it is not there.
    std::string page, page_note;
    bool advanced = false;  // the page's "more options" part of the form
    std::string url;        // the page's URL-hash key, empty if the page does not store it in the URL
    bool takes(unsigned command_bit) const { return (commands & command_bit) != 0; }
    bool is_switch() const { return type == OptionType::flag; }
};

// A fine-tune's sequence length when the request gives none and the model's own is longer (the seq row's
// default): instruction data and the published recipes (QLoRA's Guanaco, Alpaca, PEFT's examples) run
// 512-2048 tokens, not the model's pre-training context (a 7B LoRA at 4,096 tokens does not fit a 24 GB card;
// at 2,048 it does).
inline constexpr std::int64_t finetune_default_seq = 2048;

const std::vector<OptionDef>& option_table();
const OptionDef* find_option(const std::string& name);  // by request key; null if none
const OptionDef* find_flag(const std::string& flag, unsigned command_bit);  // null if the command has none

// Whether `value`, given for `row`, makes the request a cluster question (the row's cluster_question).
bool asks_cluster(const OptionDef& row, const nlohmann::json& value);

// Refuses `row` (code conflict) when the request gives it while an option of its applies_with has another value.
class RequestOptions;
void check_applies(const OptionDef& row, const RequestOptions& options);
nlohmann::json options_json();  // the table as {"options": [...]} (`prenet options --json`, the page)

// Checks a value against its row and returns it normalised (a count as an integer). Errors name the option
// as `spelling` (the API: 'grad_accum'; the CLI: --grad-accum) and carry the row's name as their field.
nlohmann::json check_option(const OptionDef& row, const nlohmann::json& value, const std::string& spelling);

// A request's options for one command, each checked against its row; a key the command does not take is an
// error (code unknown_option). Absent options read as their row's default.
class RequestOptions {
public:
    RequestOptions(const nlohmann::json& request, unsigned command_bit);
    bool has(const std::string& name) const;  // given, and not null
    const nlohmann::json& value(const std::string& name) const;  // as given, or the default (may be null)
    std::int64_t count(const std::string& name) const;
    double number(const std::string& name) const;  // a number or count, 0 when absent without a default
    std::string text(const std::string& name) const;
    bool flag(const std::string& name) const;

private:
    nlohmann::json values_ = nlohmann::json::object();
};

// Echoes a command's settings in table order: every `echo` row that takes the command gets its value from
// `resolved` (which must hold each of them: a missing one is a bug), plus the `derived` values that follow
// from them (which must not be rows).
nlohmann::json echo_settings(const nlohmann::json& resolved, const nlohmann::json& derived, unsigned command_bit);

}  // namespace prenet
