// probe/assemble.cpp — in-process assembly with LLVM's MC layer, set up as llvm-mc does (see assemble.h).
#include "probe/assemble.h"

#include <set>

#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCObjectFileInfo.h>
#include <llvm/MC/MCObjectWriter.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "llvm/llvm_compat.h"
#include "llvm/toolchain.h"

namespace archdb {

struct Assembler::Tables {
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asm_info;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instructions;
};

UndefinedByFunction undefined_symbols_by_function(const std::string& object, std::string& error) {
  UndefinedByFunction out;
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "probe.o"));
  if (!file) {
    error = llvm::toString(file.takeError());
    return out;
  }
  const auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(file->get());
  if (!elf) {
    error = "not an ELF object";
    return out;
  }
  struct Function {
    std::string name;
    uint64_t section_index, begin, end;
  };
  std::vector<Function> functions;
  std::vector<std::string> undefined;  // symbol-table order
  for (const llvm::object::ELFSymbolRef symbol : elf->symbols()) {
    auto flags = symbol.getFlags();
    auto name = symbol.getName();
    if (!flags || !name) {
      if (!flags) llvm::consumeError(flags.takeError());
      if (!name) llvm::consumeError(name.takeError());
      continue;
    }
    if (*flags & llvm::object::SymbolRef::SF_Undefined) {
      if (!name->empty()) undefined.push_back(name->str());
      continue;
    }
    auto type = symbol.getType();
    auto section = symbol.getSection();
    auto address = symbol.getValue();
    if (!type || !section || !address) {
      if (!type) llvm::consumeError(type.takeError());
      if (!section) llvm::consumeError(section.takeError());
      if (!address) llvm::consumeError(address.takeError());
      continue;
    }
    if (*type != llvm::object::SymbolRef::ST_Function || *section == elf->section_end()) continue;
    functions.push_back({name->str(), (*section)->getIndex(), *address, *address + symbol.getSize()});
    out.by_function[name->str()];
  }
  std::map<std::string, std::set<std::string>> referenced;  // function -> undefined symbols it names
  std::set<std::string> attributed;
  for (const auto& section : elf->sections()) {
    auto relocated = section.getRelocatedSection();
    if (!relocated) {
      llvm::consumeError(relocated.takeError());
      continue;
    }
    if (*relocated == elf->section_end()) continue;
    uint64_t target_index = (*relocated)->getIndex();
    for (const auto& relocation : section.relocations()) {
      auto symbol = relocation.getSymbol();
      if (symbol == elf->symbol_end()) continue;
      auto flags = symbol->getFlags();
      auto name = symbol->getName();
      if (!flags || !name) {
        if (!flags) llvm::consumeError(flags.takeError());
        if (!name) llvm::consumeError(name.takeError());
        continue;
      }
      if (!(*flags & llvm::object::SymbolRef::SF_Undefined) || name->empty()) continue;
      uint64_t at = relocation.getOffset();
      for (const auto& f : functions) {
        if (f.section_index == target_index && at >= f.begin && at < f.end) {
          referenced[f.name].insert(name->str());
          attributed.insert(name->str());
        }
      }
    }
  }
  out.all = undefined;
  for (const auto& name : undefined) {
    if (!attributed.count(name)) out.unattributed.push_back(name);
    for (auto& [function, list] : out.by_function)
      if (referenced[function].count(name)) list.push_back(name);
  }
  return out;
}

Assembler::Assembler(const std::string& cpu, const std::string& features) : tables_(new Tables) {
  const llvm::Target& target = amdgpu_target();
  const llvm::Triple& triple = amdgpu_triple();
  tables_->registers.reset(compat::create_register_info(target, triple));
  tables_->asm_info.reset(compat::create_asm_info(target, *tables_->registers, triple, tables_->options));
  tables_->subtarget.reset(compat::create_subtarget_info(target, triple, cpu, features));
  tables_->instructions.reset(target.createMCInstrInfo());
}

Assembler::~Assembler() = default;

namespace {
struct DiagnosticSink {
  std::vector<std::string>* errors;
};

void collect_diagnostic(const llvm::SMDiagnostic& d, void* context) {
  if (d.getKind() != llvm::SourceMgr::DK_Error) return;
  auto* sink = static_cast<DiagnosticSink*>(context);
  std::string msg = d.getMessage().str();
  std::string line = d.getLineContents().str();
  size_t b = line.find_first_not_of(" \t");
  if (b != std::string::npos) msg += ": " + line.substr(b);
  sink->errors->push_back(msg);
}
}  // namespace

AssemblyResult Assembler::assemble(const std::string& text) const {
  AssemblyResult result;
  const llvm::Target& target = amdgpu_target();
  const llvm::Triple& triple = amdgpu_triple();
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "probe.s"), llvm::SMLoc());
  DiagnosticSink sink{&result.errors};
  sources.setDiagHandler(collect_diagnostic, &sink);

  std::unique_ptr<llvm::MCContext> owned = compat::make_mc_context(triple, *tables_->asm_info, *tables_->registers,
                                                                  *tables_->subtarget, &sources, tables_->options);
  llvm::MCContext& context = *owned;
  std::unique_ptr<llvm::MCObjectFileInfo> file_info(target.createMCObjectFileInfo(context, /*PIC=*/false));
  context.setObjectFileInfo(file_info.get());

  llvm::SmallString<8192> object;
  llvm::raw_svector_ostream object_stream(object);
  llvm::MCCodeEmitter* emitter = target.createMCCodeEmitter(*tables_->instructions, context);
  llvm::MCAsmBackend* backend = target.createMCAsmBackend(*tables_->subtarget, *tables_->registers, tables_->options);
  std::unique_ptr<llvm::MCStreamer> streamer(target.createMCObjectStreamer(
      triple, context, std::unique_ptr<llvm::MCAsmBackend>(backend), backend->createObjectWriter(object_stream),
      std::unique_ptr<llvm::MCCodeEmitter>(emitter), *tables_->subtarget));
  std::unique_ptr<llvm::MCAsmParser> parser(llvm::createMCAsmParser(sources, context, *streamer, *tables_->asm_info));
  std::unique_ptr<llvm::MCTargetAsmParser> target_parser(
      compat::create_target_asm_parser(target, *tables_->subtarget, *parser, *tables_->instructions, tables_->options));
  parser->setTargetParser(*target_parser);
  bool failed = parser->Run(/*NoInitialTextSection=*/false);
  if (failed || !result.errors.empty()) return result;
  streamer.reset();  // finishes the object

  std::string error;
  result.undefined = undefined_symbols_by_function(std::string(object.data(), object.size()), error);
  if (!error.empty()) {
    result.errors.push_back("the assembler wrote an unreadable object: " + error);
    return result;
  }
  result.object_written = true;
  return result;
}

}  // namespace archdb
