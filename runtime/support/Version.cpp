//===- version.cpp - rudnn's version and what this machine offers it ------===//

#include "rudnn/version.h"

#include "runtime/backends/CudaBackend.h"
#include "runtime/backends/CudaDriver.h"
#include "runtime/compile/CudaToolkit.h"

#include <exception>

using namespace rudnn;

const char *rudnn::version() { return RUDNN_VERSION_STRING; }

std::string rudnn::setupReport() {
  std::string report = std::string("rudnn: ") + version() + "\n";
  auto line = [&](const std::string &name, const std::string &value) {
    report += name + ": " + value + "\n";
  };
  try {
    const runtime::CudaToolkit &toolkit = runtime::CudaToolkit::get();
    line("nvrtc",
         runtime::NvrtcCompiler::version() + " (" + toolkit.nvrtcLibrary + ")");
    line("cuda headers",
         toolkit.includeDir.empty() ? "not found" : toolkit.includeDir);
    line("ptxas", toolkit.ptxas.empty() ? "not found" : toolkit.ptxas);
  } catch (const std::exception &error) {
    line("nvrtc", std::string("unavailable: ") + error.what());
  }
  try {
    const runtime::CudaDriver &driver = runtime::CudaDriver::get();
    line("cuda driver", "CUDA " + std::to_string(driver.version / 1000) + "." +
                            std::to_string(driver.version % 1000 / 10));
    for (const runtime::CudaDeviceInfo &device : runtime::listCudaDevices())
      line("device " + std::to_string(device.ordinal),
           device.name + " (" + device.arch() + ", " +
               std::to_string(device.smCount) + " SMs, " +
               std::to_string(device.totalMemoryBytes >> 30) + " GiB)");
  } catch (const std::exception &error) {
    line("cuda driver", std::string("unavailable: ") + error.what());
  }
  return report;
}
