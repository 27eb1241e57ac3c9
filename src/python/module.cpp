// The Python module `ftplan`: one function per /api/ endpoint (server::endpoints()), each a
// request handed to the HTTP API's handler in-process. Keyword arguments are the request's JSON
// keys, the result is the reply's JSON as Python values (the CLI's --json output), and an error
// reply raises ftplan.UserError with the reply's code, message, field and suggestions.
//
//   import ftplan
//   ftplan.fit(model="llama-3.1-8b", method="lora", gpu="h200-nvl")["verdict"]  # 'fits'
//
// In-process calls have no bound on work, request or reply size (a server bounds what its clients
// may cost it; a script asks for what it needs); set_work_budget() sets one.
#include <pybind11/pybind11.h>

#include <limits>
#include <string>

#include "cli/cli.hpp"
#include "server/api.hpp"

namespace py = pybind11;

namespace {

using ftplan::server::ApiLimits;
using ftplan::server::Endpoint;

ApiLimits& limits() {
  static ApiLimits in_process = [] {
    ApiLimits l;
    l.max_body_bytes = std::numeric_limits<std::size_t>::max();
    l.max_reply_bytes = std::numeric_limits<std::size_t>::max();
    l.work = {};  // no bound
    return l;
  }();
  return in_process;
}

// ftplan.UserError (set when the module loads; the module holds the reference).
py::handle user_error_class;

[[noreturn]] void raise_user_error(const ftplan::server::Response& reply) {
  py::dict error;
  try {
    error = py::module_::import("json").attr("loads")(reply.body)["error"];
  } catch (const py::error_already_set&) {
    error["code"] = "internal";
    error["message"] = reply.body;
  }
  py::object e = user_error_class(error.attr("get")("message", ""));
  e.attr("code") = error.attr("get")("code", "");
  e.attr("field") = error.attr("get")("field", "");
  e.attr("suggestions") = error.attr("get")("suggestions", py::list());
  e.attr("status") = reply.status;
  PyErr_SetObject(user_error_class.ptr(), e.ptr());
  throw py::error_already_set();
}

// The request's options: keyword arguments, or one positional dict; a positional text is the
// body as it stands (a runs document in YAML or JSON, for plan).
py::object call(const Endpoint& endpoint, const py::args& args, const py::kwargs& kwargs) {
  const std::string name = endpoint.command;
  const py::module_ json = py::module_::import("json");
  ftplan::server::Request request;
  request.method = endpoint.method;
  request.path = endpoint.path;
  request.content_type = "application/json";
  // report(text): the runs document is the body of POST /api/report; its options (lang, format,
  // gpu) go in the query string as for GET.
  const bool runs_report = name == "report" && args.size() == 1 && py::isinstance<py::str>(args[0]);
  py::dict options;
  if (args.size() > 1 ||
      (args.size() == 1 && py::isinstance<py::str>(args[0]) && kwargs.size() && !runs_report))
    throw py::type_error(name + "() takes keyword arguments, or one dict or document text");
  if (args.size() == 1 && py::isinstance<py::str>(args[0])) {
    request.body = args[0].cast<std::string>();
    try {
      json.attr("loads")(args[0]);
    } catch (const py::error_already_set&) {
      request.content_type = "application/yaml";  // not JSON: a YAML document (plan takes one)
    }
  } else if (args.size() == 1) {
    if (!py::isinstance<py::dict>(args[0]))
      throw py::type_error(name + "(): the positional argument is a dict or document text");
    options.attr("update")(args[0]);
  }
  options.attr("update")(kwargs);
  if (request.method == "GET" || runs_report) {
    // GET takes its options from the query string: text for text, numbers and true/false.
    py::dict rest;
    for (const auto& [key, value] : options) {
      std::string text;
      if (py::isinstance<py::str>(value))
        text = value.cast<std::string>();
      else if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value) ||
               py::isinstance<py::float_>(value))
        text = json.attr("dumps")(value).cast<std::string>();
      else {
        rest[key] = value;
        continue;
      }
      request.query[key.cast<std::string>()] = text;
    }
    options = rest;
  }
  if (runs_report) {
    request.method = "POST";
    if (!options.empty())
      throw py::type_error("report(): lang, format and gpu take text, not " +
                           py::repr(options).cast<std::string>());
  }
  if (request.body.empty() && !options.empty())
    request.body = json.attr("dumps")(options, py::arg("allow_nan") = false).cast<std::string>();

  const auto& run = ftplan::cli::loaded_server_commands();
  const ApiLimits bounds = limits();  // read while the lock is held (set_work_budget writes it)
  ftplan::server::Response reply;
  {
    const py::gil_scoped_release unlocked;
    reply = ftplan::server::handle(request, run, bounds);
  }
  if (reply.status != 200) raise_user_error(reply);
  if (reply.content_type.starts_with("application/json")) return json.attr("loads")(reply.body);
  return py::str(reply.body);  // report: HTML or Markdown
}

std::string doc(const Endpoint& endpoint) {
  std::string text = std::string(endpoint.command) + "(**options): `ftplan " + endpoint.command +
                     " --json` as " + endpoint.method + " " + endpoint.path +
                     " answers it; raises ftplan.UserError on bad input.\n\nOptions:";
  for (const auto& o : ftplan::cli::loaded_server_commands().options(endpoint.command))
    if (o.key != "json")
      text += " " + o.key + (o.flag ? " (true/false)" : o.list ? " (list)" : "") + ",";
  text.back() = '.';
  return text;
}

}  // namespace

PYBIND11_MODULE(ftplan, m) {
  m.doc() =
      "ftplan: plans GPU fine-tuning runs. Each function is an endpoint of the HTTP API "
      "(ftplan serve) called in-process: keyword arguments named as the API's JSON keys, the "
      "result the CLI's --json output as a dict.";
  m.attr("__version__") = ftplan::cli::version();
  py::options options;
  options.disable_function_signatures();  // each function's text says what it takes
  py::object error = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "ftplan.UserError",
      "Bad input: .code, .field (the option at fault), .suggestions (close names) and the "
      "message, as the API's error reply gives them.",
      PyExc_ValueError, nullptr));
  if (!error) throw py::error_already_set();
  m.attr("UserError") = error;
  user_error_class = error;
  for (const Endpoint& endpoint : ftplan::server::endpoints()) {
    // One function per command: report(lang=...) asks GET /api/report, report(runs_text) POST.
    if (py::hasattr(m, endpoint.command)) continue;
    m.def(
        endpoint.command,
        [&endpoint](const py::args& args, const py::kwargs& kwargs) {
          return call(endpoint, args, kwargs);
        },
        doc(endpoint).c_str());
  }
  m.def(
      "set_work_budget",
      [](long long evaluations, double seconds) {
        limits().work = {evaluations, seconds};
      },
      py::arg("evaluations") = 0, py::arg("seconds") = 0.0,
      "Bounds the work of each later call (planner evaluations, seconds; 0: no bound), as "
      "ftplan serve bounds a request; a call past it raises UserError with code 'over_budget'.");
}
