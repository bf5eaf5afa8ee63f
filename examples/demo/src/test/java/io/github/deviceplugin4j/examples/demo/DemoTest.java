package io.github.deviceplugin4j.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The demo runs start to end and prints each stage the README promises. */
class DemoTest {

  @Test
  void runsEveryStageAndSucceeds() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int status;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      status = new Demo(out).run();
    }
    String output = bytes.toString(StandardCharsets.UTF_8);

    assertThat(status).isZero();
    assertThat(output)
        .contains("registered fpga.example.com/af-" + Demo.AFU_A)
        .contains("registered nic.example.com/sriov_net")
        .contains("registered rdma.example.com/hca_shared")
        .contains("nic.example.com/sriov_net: capacity 4, allocatable 4")
        .contains("rdma.example.com/hca_shared: capacity 16, allocatable 16")
        .contains("env    PCIDEVICE_NIC_EXAMPLE_COM_SRIOV_NET=")
        .contains("\"type\":\"pci\"")
        .contains("device /dev/vfio/vfio (rw)")
        .contains("allocated 2 x rdma.example.com/hca to pod demo/mpi-rank: ")
        .contains("kept the container on NUMA 1 ")
        .contains("device /dev/dfl-port.")
        .contains("the FPGA pre-start check passed")
        .contains("generic.example.com/serial: ttyUSB0::0, ttyUSB0::1")
        .contains("device /dev/ttyUSB0 (rw)")
        .contains(
            "deviceplugin4j_rpc_seconds_count{code=\"OK\",method=\"Allocate\","
                + "resource=\"fpga.example.com/af-"
                + Demo.AFU_A
                + "\"} 1")
        .contains(
            "deviceplugin4j_registered{resource=\"fpga.example.com/af-" + Demo.AFU_A + "\"} 1")
        .contains("all 4 VFs Unhealthy, allocatable 0 of 4")
        .contains("all VFs Healthy again, allocatable 4 of 4")
        .contains("re-registered nic.example.com/sriov_dpdk after ")
        .contains("6 of 6 resources registered")
        .contains("device-info files left: 0")
        .contains(
            "driver fpga.example.com registers as DRAPlugin, endpoint dra.sock, the kubelet chose"
                + " service v1.DRAPlugin")
        .contains(": 5 devices, pool demo-node generation 1 (2 slice(s) in the pool)")
        .contains("afuId=d8424dc4... interfaceId=")
        .contains("allocated claim demo/accel-claim (uid ")
        .contains("NodePrepareResources: CDI devices fpga.example.com/port=")
        .contains("wrote CDI spec fpga.example.com-port_claim-")
        .contains("\"path\" : \"/dev/dfl-port.0\"")
        .contains(" UNHEALTHY after ")
        .contains("slices now taint dfl-port-0-")
        .contains("(fpga.example.com/unhealthy=")
        .contains(":NoSchedule), pool generation 2")
        .contains(" HEALTHY again")
        .contains("NodeUnprepareResources: ok, CDI spec removed")
        .contains("driver stopped: sockets removed")
        .contains("demo finished");
    assertThat(output.lines().filter(l -> l.contains("re-registered"))).hasSize(6);
  }
}
