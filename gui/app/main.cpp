// gemflow-studio [workflow.yaml] [--plugin-path DIR]...
//
// The command line is parsed before the QApplication exists, so that --help, --version and
// usage errors work without a display (on a cluster login node, in CI, over ssh without X).
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QStringList>
#include <QStyleFactory>

#include <gemflow/memory.hpp>
#include <gemflow/plugin_loader.hpp>

#include "app/main_window.hpp"
#include "editor/style.hpp"
#include "viewers/vtk_view.hpp"

namespace {

constexpr int kUsageError = 2;  // as `gemflow`: invalid usage

/// Options that QGuiApplication consumes itself (qguiapplication.cpp, qapplication.cpp): known
/// to the early parser, hidden from --help, and left for Qt to act on.
void add_qt_options(QCommandLineParser& cli) {
  for (const char* name :
       {"platform", "platformpluginpath", "platformtheme", "plugin", "qwindowgeometry", "geometry", "qwindowtitle",
        "title", "qwindowicon", "icon", "display", "style", "stylesheet", "session", "name", "qmljsdebugger"}) {
    QCommandLineOption o(QString::fromLatin1(name), {}, QStringLiteral("value"));
    o.setFlags(QCommandLineOption::HiddenFromHelp);
    cli.addOption(o);
  }
  for (const char* name : {"reverse", "nograb", "dograb", "sync", "widgetcount", "testability"}) {
    QCommandLineOption o(QString::fromLatin1(name));
    o.setFlags(QCommandLineOption::HiddenFromHelp);
    cli.addOption(o);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // before any plugin loads OpenBLAS: under `ulimit -v` its threads must fit (else it hangs)
  (void)gemflow::fit_blas_threads_to_address_limit();
  QCoreApplication::setOrganizationName(QStringLiteral("Gemflow"));
  QCoreApplication::setApplicationName(QStringLiteral("Gemflow Studio"));
  QCoreApplication::setApplicationVersion(QStringLiteral(GEMFLOW_STUDIO_VERSION));

  QCommandLineParser cli;
  cli.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);  // Qt's "-platform x"
  cli.setApplicationDescription(QStringLiteral(
      "Gemflow Studio: point-and-click editor of Gemflow workflows (the YAML files `gemflow run` reads).\n"
      "Plugins are searched in the install's plugin folder, then GEMFLOW_PLUGIN_PATH, then --plugin-path."));
  const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                QStringLiteral("Show this help and exit."));
  const QCommandLineOption version({QStringLiteral("v"), QStringLiteral("version")},
                                   QStringLiteral("Show the version and exit."));
  const QCommandLineOption plugin_path(
      QStringLiteral("plugin-path"),
      QStringLiteral("Extra folder of plugins (after the install's and GEMFLOW_PLUGIN_PATH)."), QStringLiteral("DIR"));
  cli.addOption(help);
  cli.addOption(version);
  cli.addOption(plugin_path);
  add_qt_options(cli);
  cli.addPositionalArgument(QStringLiteral("workflow"), QStringLiteral("Workflow file to open (.yaml)."),
                            QStringLiteral("[workflow]"));

  QStringList args;
  for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
  if (!cli.parse(args)) {
    std::fprintf(stderr, "gemflow-studio: %s\nTry 'gemflow-studio --help'.\n", qPrintable(cli.errorText()));
    return kUsageError;
  }
  if (cli.isSet(help)) {
    // helpText() names the executable from QCoreApplication, which does not exist yet.
    QString text = cli.helpText();
    text.replace(QStringLiteral("<executable_name>"), QStringLiteral("gemflow-studio"));
    std::fputs(qPrintable(text), stdout);
    return 0;
  }
  if (cli.isSet(version)) {
    std::printf("gemflow-studio %s\n", GEMFLOW_STUDIO_VERSION);
    return 0;
  }
  if (cli.positionalArguments().size() > 1) {
    std::fprintf(stderr, "gemflow-studio: one workflow at most (got %lld)\nTry 'gemflow-studio --help'.\n",
                 static_cast<long long>(cli.positionalArguments().size()));
    return kUsageError;
  }

  gemflow::studio::set_default_surface_format();  // before QApplication (VTK needs 3.2 core)
  QApplication app(argc, argv);
  (void)gemflow::studio::desktop_prefers_dark();  // the desktop's palette, before Fusion's
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  gemflow::studio::apply_theme(gemflow::studio::MainWindow::theme_setting());

  gemflow::Registry registry;
  gemflow::PluginHost host(registry);
  std::vector<std::filesystem::path> extra;
  for (const QString& p : cli.values(plugin_path)) extra.emplace_back(p.toStdString());
  host.load_all(extra);

  gemflow::studio::MainWindow w(registry, host.records());
  w.show();
  if (!cli.positionalArguments().isEmpty()) w.open_file(cli.positionalArguments().front(), true);
  return QApplication::exec();
}
