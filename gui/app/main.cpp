// gemflow-studio [workflow.yaml] [--plugin-path DIR]...
#include <QApplication>
#include <QCommandLineParser>
#include <QStyleFactory>

#include <gemflow/plugin_loader.hpp>

#include "app/main_window.hpp"
#include "viewers/vtk_view.hpp"

int main(int argc, char** argv) {
  gemflow::studio::set_default_surface_format();  // before QApplication (VTK needs 3.2 core)
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Gemflow"));
  QApplication::setApplicationName(QStringLiteral("Gemflow Studio"));
  QApplication::setApplicationVersion(QStringLiteral(GEMFLOW_STUDIO_VERSION));
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));

  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("Gemflow Studio: point-and-click editor of Gemflow workflows"));
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption plugin_path(QStringLiteral("plugin-path"),
                                 QStringLiteral("Extra folder of plugins (after the install's and GEMFLOW_PLUGIN_PATH)."),
                                 QStringLiteral("DIR"));
  cli.addOption(plugin_path);
  cli.addPositionalArgument(QStringLiteral("workflow"), QStringLiteral("Workflow file to open (.yaml)"), QStringLiteral("[workflow]"));
  cli.process(app);

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
