package memory

// DefaultDRAM is the DRAM preset used where a scenario names none.
func DefaultDRAM() DRAMConfig { return DDR4_3200() }

// DefaultHostMemory is the host memory of a server.
func DefaultHostMemory() DRAMConfig { return HostMemoryConfig() }

// DefaultExchangeMemory is the FPGA's on-card HBM, the patent's memory
// between FPGA and accelerator.
func DefaultExchangeMemory() DRAMConfig { return HBM2_U55C() }

// DefaultPCIe is the FPGA card's link to the host.
func DefaultPCIe() PCIeConfig { return AlveoU55CXDMA() }

// DefaultSSD is the external store.
func DefaultSSD() SSDConfig { return KioxiaCM6() }
