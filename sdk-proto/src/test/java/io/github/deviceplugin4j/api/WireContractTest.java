package io.github.deviceplugin4j.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import io.github.deviceplugin4j.api.dra.v1.DraPluginV1Api;
import io.github.deviceplugin4j.api.dra.v1beta1.DraPluginV1Beta1Api;
import io.github.deviceplugin4j.api.drahealth.v1.DraHealthV1Api;
import io.github.deviceplugin4j.api.drahealth.v1alpha1.DraHealthV1Alpha1Api;
import io.github.deviceplugin4j.api.pluginregistration.PluginRegistrationApi;
import io.github.deviceplugin4j.api.podresources.v1.PodResourcesApi;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Checks the generated descriptors against a table written by hand from the kubelet's published
 * API, so a wrong field number, type, label or name in a .proto file fails here rather than being
 * silently ignored on the wire.
 */
class WireContractTest {

  /** message.field number type label, one per line; the message name is fully qualified. */
  private static final String FIELDS =
      """
      v1beta1.DevicePluginOptions.pre_start_required 1 bool optional
      v1beta1.DevicePluginOptions.get_preferred_allocation_available 2 bool optional
      v1beta1.RegisterRequest.version 1 string optional
      v1beta1.RegisterRequest.endpoint 2 string optional
      v1beta1.RegisterRequest.resource_name 3 string optional
      v1beta1.RegisterRequest.options 4 message:v1beta1.DevicePluginOptions optional
      v1beta1.ListAndWatchResponse.devices 1 message:v1beta1.Device repeated
      v1beta1.TopologyInfo.nodes 1 message:v1beta1.NUMANode repeated
      v1beta1.NUMANode.ID 1 int64 optional
      v1beta1.Device.ID 1 string optional
      v1beta1.Device.health 2 string optional
      v1beta1.Device.topology 3 message:v1beta1.TopologyInfo optional
      v1beta1.PreStartContainerRequest.devices_ids 1 string repeated
      v1beta1.PreferredAllocationRequest.container_requests 1 message:v1beta1.ContainerPreferredAllocationRequest repeated
      v1beta1.ContainerPreferredAllocationRequest.available_deviceIDs 1 string repeated
      v1beta1.ContainerPreferredAllocationRequest.must_include_deviceIDs 2 string repeated
      v1beta1.ContainerPreferredAllocationRequest.allocation_size 3 int32 optional
      v1beta1.PreferredAllocationResponse.container_responses 1 message:v1beta1.ContainerPreferredAllocationResponse repeated
      v1beta1.ContainerPreferredAllocationResponse.deviceIDs 1 string repeated
      v1beta1.AllocateRequest.container_requests 1 message:v1beta1.ContainerAllocateRequest repeated
      v1beta1.ContainerAllocateRequest.devices_ids 1 string repeated
      v1beta1.CDIDevice.name 1 string optional
      v1beta1.AllocateResponse.container_responses 1 message:v1beta1.ContainerAllocateResponse repeated
      v1beta1.ContainerAllocateResponse.envs 1 map<string,string> repeated
      v1beta1.ContainerAllocateResponse.mounts 2 message:v1beta1.Mount repeated
      v1beta1.ContainerAllocateResponse.devices 3 message:v1beta1.DeviceSpec repeated
      v1beta1.ContainerAllocateResponse.annotations 4 map<string,string> repeated
      v1beta1.ContainerAllocateResponse.cdi_devices 5 message:v1beta1.CDIDevice repeated
      v1beta1.Mount.container_path 1 string optional
      v1beta1.Mount.host_path 2 string optional
      v1beta1.Mount.read_only 3 bool optional
      v1beta1.DeviceSpec.container_path 1 string optional
      v1beta1.DeviceSpec.host_path 2 string optional
      v1beta1.DeviceSpec.permissions 3 string optional
      pluginregistration.PluginInfo.type 1 string optional
      pluginregistration.PluginInfo.name 2 string optional
      pluginregistration.PluginInfo.endpoint 3 string optional
      pluginregistration.PluginInfo.supported_versions 4 string repeated
      pluginregistration.RegistrationStatus.plugin_registered 1 bool optional
      pluginregistration.RegistrationStatus.error 2 string optional
      v1.AllocatableResourcesResponse.devices 1 message:v1.ContainerDevices repeated
      v1.AllocatableResourcesResponse.cpu_ids 2 int64 repeated
      v1.AllocatableResourcesResponse.memory 3 message:v1.ContainerMemory repeated
      v1.ListPodResourcesResponse.pod_resources 1 message:v1.PodResources repeated
      v1.PodResources.name 1 string optional
      v1.PodResources.namespace 2 string optional
      v1.PodResources.containers 3 message:v1.ContainerResources repeated
      v1.PodResources.cpu_ids 4 int64 repeated
      v1.PodResources.memory 5 message:v1.ContainerMemory repeated
      v1.ContainerResources.name 1 string optional
      v1.ContainerResources.devices 2 message:v1.ContainerDevices repeated
      v1.ContainerResources.cpu_ids 3 int64 repeated
      v1.ContainerResources.memory 4 message:v1.ContainerMemory repeated
      v1.ContainerResources.dynamic_resources 5 message:v1.DynamicResource repeated
      v1.ContainerMemory.memory_type 1 string optional
      v1.ContainerMemory.size 2 uint64 optional
      v1.ContainerMemory.topology 3 message:v1.TopologyInfo optional
      v1.ContainerDevices.resource_name 1 string optional
      v1.ContainerDevices.device_ids 2 string repeated
      v1.ContainerDevices.topology 3 message:v1.TopologyInfo optional
      v1.TopologyInfo.nodes 1 message:v1.NUMANode repeated
      v1.NUMANode.ID 1 int64 optional
      v1.DynamicResource.claim_name 2 string optional
      v1.DynamicResource.claim_namespace 3 string optional
      v1.DynamicResource.claim_resources 4 message:v1.ClaimResource repeated
      v1.ClaimResource.cdi_devices 1 message:v1.CDIDevice repeated
      v1.ClaimResource.driver_name 2 string optional
      v1.ClaimResource.pool_name 3 string optional
      v1.ClaimResource.device_name 4 string optional
      v1.ClaimResource.share_id 5 string optional
      v1.CDIDevice.name 1 string optional
      v1.GetPodResourcesRequest.pod_name 1 string optional
      v1.GetPodResourcesRequest.pod_namespace 2 string optional
      v1.GetPodResourcesResponse.pod_resources 1 message:v1.PodResources optional
      k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesRequest.claims 1 message:k8s.io.kubelet.pkg.apis.dra.v1.Claim repeated
      k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesResponse.claims 1 map<string,message:k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourceResponse> repeated
      k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourceResponse.devices 1 message:k8s.io.kubelet.pkg.apis.dra.v1.Device repeated
      k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourceResponse.error 2 string optional
      k8s.io.kubelet.pkg.apis.dra.v1.Device.request_names 1 string repeated
      k8s.io.kubelet.pkg.apis.dra.v1.Device.pool_name 2 string optional
      k8s.io.kubelet.pkg.apis.dra.v1.Device.device_name 3 string optional
      k8s.io.kubelet.pkg.apis.dra.v1.Device.cdi_device_ids 4 string repeated
      k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesRequest.claims 1 message:k8s.io.kubelet.pkg.apis.dra.v1.Claim repeated
      k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesResponse.claims 1 map<string,message:k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourceResponse> repeated
      k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourceResponse.error 1 string optional
      k8s.io.kubelet.pkg.apis.dra.v1.Claim.namespace 1 string optional
      k8s.io.kubelet.pkg.apis.dra.v1.Claim.uid 2 string optional
      k8s.io.kubelet.pkg.apis.dra.v1.Claim.name 3 string optional
      k8s.io.kubelet.pkg.apis.dra.v1beta1.NodePrepareResourcesRequest.claims 1 message:k8s.io.kubelet.pkg.apis.dra.v1beta1.Claim repeated
      k8s.io.kubelet.pkg.apis.dra.v1beta1.NodePrepareResourcesResponse.claims 1 map<string,message:k8s.io.kubelet.pkg.apis.dra.v1beta1.NodePrepareResourceResponse> repeated
      k8s.io.kubelet.pkg.apis.dra.v1beta1.NodePrepareResourceResponse.devices 1 message:k8s.io.kubelet.pkg.apis.dra.v1beta1.Device repeated
      k8s.io.kubelet.pkg.apis.dra.v1beta1.NodePrepareResourceResponse.error 2 string optional
      k8s.io.kubelet.pkg.apis.dra.v1beta1.Device.request_names 1 string repeated
      k8s.io.kubelet.pkg.apis.dra.v1beta1.Device.pool_name 2 string optional
      k8s.io.kubelet.pkg.apis.dra.v1beta1.Device.device_name 3 string optional
      k8s.io.kubelet.pkg.apis.dra.v1beta1.Device.cdi_device_ids 4 string repeated
      k8s.io.kubelet.pkg.apis.dra.v1beta1.NodeUnprepareResourcesRequest.claims 1 message:k8s.io.kubelet.pkg.apis.dra.v1beta1.Claim repeated
      k8s.io.kubelet.pkg.apis.dra.v1beta1.NodeUnprepareResourcesResponse.claims 1 map<string,message:k8s.io.kubelet.pkg.apis.dra.v1beta1.NodeUnprepareResourceResponse> repeated
      k8s.io.kubelet.pkg.apis.dra.v1beta1.NodeUnprepareResourceResponse.error 1 string optional
      k8s.io.kubelet.pkg.apis.dra.v1beta1.Claim.namespace 1 string optional
      k8s.io.kubelet.pkg.apis.dra.v1beta1.Claim.uid 2 string optional
      k8s.io.kubelet.pkg.apis.dra.v1beta1.Claim.name 3 string optional
      v1.DeviceIdentifier.pool_name 1 string optional
      v1.DeviceIdentifier.device_name 2 string optional
      v1.DeviceHealth.device 1 message:v1.DeviceIdentifier optional
      v1.DeviceHealth.health 2 enum:v1.HealthStatus optional
      v1.DeviceHealth.last_updated_time 3 int64 optional
      v1.DeviceHealth.health_check_timeout_seconds 4 int64 optional
      v1.DeviceHealth.message 5 string optional
      v1.NodeWatchResourcesResponse.devices 1 message:v1.DeviceHealth repeated
      v1alpha1.DeviceIdentifier.pool_name 1 string optional
      v1alpha1.DeviceIdentifier.device_name 2 string optional
      v1alpha1.DeviceHealth.device 1 message:v1alpha1.DeviceIdentifier optional
      v1alpha1.DeviceHealth.health 2 enum:v1alpha1.HealthStatus optional
      v1alpha1.DeviceHealth.last_updated_time 3 int64 optional
      v1alpha1.DeviceHealth.health_check_timeout_seconds 4 int64 optional
      v1alpha1.DeviceHealth.message 5 string optional
      v1alpha1.NodeWatchResourcesResponse.devices 1 message:v1alpha1.DeviceHealth repeated
      """;

  /** Messages with no fields at all. */
  private static final List<String> EMPTY_MESSAGES =
      List.of(
          "v1beta1.Empty",
          "v1beta1.PreStartContainerResponse",
          "pluginregistration.InfoRequest",
          "pluginregistration.RegistrationStatusResponse",
          "v1.AllocatableResourcesRequest",
          "v1.ListPodResourcesRequest",
          "v1.NodeWatchResourcesRequest",
          "v1alpha1.NodeWatchResourcesRequest");

  /** Full gRPC method name, request type, response type, and whether the server streams. */
  private static final String METHODS =
      """
      v1beta1.Registration/Register v1beta1.RegisterRequest v1beta1.Empty unary
      v1beta1.DevicePlugin/GetDevicePluginOptions v1beta1.Empty v1beta1.DevicePluginOptions unary
      v1beta1.DevicePlugin/ListAndWatch v1beta1.Empty v1beta1.ListAndWatchResponse server-streaming
      v1beta1.DevicePlugin/GetPreferredAllocation v1beta1.PreferredAllocationRequest v1beta1.PreferredAllocationResponse unary
      v1beta1.DevicePlugin/Allocate v1beta1.AllocateRequest v1beta1.AllocateResponse unary
      v1beta1.DevicePlugin/PreStartContainer v1beta1.PreStartContainerRequest v1beta1.PreStartContainerResponse unary
      pluginregistration.Registration/GetInfo pluginregistration.InfoRequest pluginregistration.PluginInfo unary
      pluginregistration.Registration/NotifyRegistrationStatus pluginregistration.RegistrationStatus pluginregistration.RegistrationStatusResponse unary
      v1.PodResourcesLister/List v1.ListPodResourcesRequest v1.ListPodResourcesResponse unary
      v1.PodResourcesLister/GetAllocatableResources v1.AllocatableResourcesRequest v1.AllocatableResourcesResponse unary
      v1.PodResourcesLister/Get v1.GetPodResourcesRequest v1.GetPodResourcesResponse unary
      k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesRequest k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesResponse unary
      k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesRequest k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesResponse unary
      k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources k8s.io.kubelet.pkg.apis.dra.v1beta1.NodePrepareResourcesRequest k8s.io.kubelet.pkg.apis.dra.v1beta1.NodePrepareResourcesResponse unary
      k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources k8s.io.kubelet.pkg.apis.dra.v1beta1.NodeUnprepareResourcesRequest k8s.io.kubelet.pkg.apis.dra.v1beta1.NodeUnprepareResourcesResponse unary
      v1.DRAResourceHealth/NodeWatchResources v1.NodeWatchResourcesRequest v1.NodeWatchResourcesResponse server-streaming
      v1alpha1.DRAResourceHealth/NodeWatchResources v1alpha1.NodeWatchResourcesRequest v1alpha1.NodeWatchResourcesResponse server-streaming
      """;

  private static final List<FileDescriptor> FILES =
      List.of(
          DevicePluginApi.getDescriptor(),
          PluginRegistrationApi.getDescriptor(),
          PodResourcesApi.getDescriptor(),
          DraPluginV1Api.getDescriptor(),
          DraPluginV1Beta1Api.getDescriptor(),
          DraHealthV1Api.getDescriptor(),
          DraHealthV1Alpha1Api.getDescriptor());

  static Stream<String> fieldRows() {
    return FIELDS.lines().map(String::strip).filter(l -> !l.isEmpty());
  }

  static Stream<String> methodRows() {
    return METHODS.lines().map(String::strip).filter(l -> !l.isEmpty());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fieldRows")
  void fieldMatchesTheKubeletContract(String row) {
    String[] cols = row.split(" ");
    String qualified = cols[0];
    int dot = qualified.lastIndexOf('.');
    Descriptor message = findMessage(qualified.substring(0, dot));
    FieldDescriptor field = message.findFieldByName(qualified.substring(dot + 1));

    assertThat(field).as("field %s exists", qualified).isNotNull();
    assertThat(field.getNumber())
        .as("number of %s", qualified)
        .isEqualTo(Integer.parseInt(cols[1]));
    assertThat(typeOf(field)).as("type of %s", qualified).isEqualTo(cols[2]);
    assertThat(field.isRepeated() ? "repeated" : "optional")
        .as("label of %s", qualified)
        .isEqualTo(cols[3]);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("methodRows")
  void methodMatchesTheKubeletContract(String row) {
    String[] cols = row.split(" ");
    String[] serviceAndMethod = cols[0].split("/");
    ServiceDescriptor service = findService(serviceAndMethod[0]);
    MethodDescriptor method = service.findMethodByName(serviceAndMethod[1]);

    assertThat(method).as("method %s exists", cols[0]).isNotNull();
    assertThat(method.getService().getFullName() + "/" + method.getName()).isEqualTo(cols[0]);
    assertThat(method.getInputType().getFullName()).isEqualTo(cols[1]);
    assertThat(method.getOutputType().getFullName()).isEqualTo(cols[2]);
    assertThat(method.isClientStreaming()).isFalse();
    assertThat(method.isServerStreaming()).isEqualTo(cols[3].equals("server-streaming"));
  }

  @Test
  void generatedGrpcStubsUseTheWireServiceNames() {
    assertThat(
            io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc.getRegisterMethod()
                .getFullMethodName())
        .isEqualTo("v1beta1.Registration/Register");
    assertThat(
            io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc.getListAndWatchMethod()
                .getFullMethodName())
        .isEqualTo("v1beta1.DevicePlugin/ListAndWatch");
    assertThat(
            io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc.getGetInfoMethod()
                .getFullMethodName())
        .isEqualTo("pluginregistration.Registration/GetInfo");
    assertThat(
            io.github.deviceplugin4j.api.podresources.v1.PodResourcesListerGrpc.getGetMethod()
                .getFullMethodName())
        .isEqualTo("v1.PodResourcesLister/Get");
  }

  @Test
  void draGrpcStubsUseTheServiceNamesTheKubeletRegistersAndCalls() {
    assertThat(
            io.github.deviceplugin4j.api.dra.v1.DRAPluginGrpc.getNodePrepareResourcesMethod()
                .getFullMethodName())
        .isEqualTo("k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources");
    assertThat(
            io.github.deviceplugin4j.api.dra.v1beta1.DRAPluginGrpc.getNodeUnprepareResourcesMethod()
                .getFullMethodName())
        .isEqualTo("k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources");
    assertThat(
            io.github.deviceplugin4j.api.drahealth.v1.DRAResourceHealthGrpc
                .getNodeWatchResourcesMethod()
                .getFullMethodName())
        .isEqualTo("v1.DRAResourceHealth/NodeWatchResources");
    assertThat(
            io.github.deviceplugin4j.api.drahealth.v1alpha1.DRAResourceHealthGrpc
                .getNodeWatchResourcesMethod()
                .getFullMethodName())
        .isEqualTo("v1alpha1.DRAResourceHealth/NodeWatchResources");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("healthFiles")
  void healthStatusEnumHasTheKubeletsNumbers(FileDescriptor file) {
    EnumDescriptor status = file.findEnumTypeByName("HealthStatus");

    assertThat(status).isNotNull();
    assertThat(status.getValues())
        .extracting(v -> v.getName() + "=" + v.getNumber())
        .containsExactly("UNKNOWN=0", "HEALTHY=1", "UNHEALTHY=2");
  }

  static Stream<FileDescriptor> healthFiles() {
    return Stream.of(DraHealthV1Api.getDescriptor(), DraHealthV1Alpha1Api.getDescriptor());
  }

  @Test
  void tableCoversEveryMessageFieldAndMethod() {
    TreeSet<String> expectedFields = new TreeSet<>();
    fieldRows().forEach(r -> expectedFields.add(r.split(" ")[0]));
    TreeSet<String> expectedMessages = new TreeSet<>(EMPTY_MESSAGES);
    expectedFields.forEach(f -> expectedMessages.add(f.substring(0, f.lastIndexOf('.'))));
    TreeSet<String> expectedMethods = new TreeSet<>();
    methodRows().forEach(r -> expectedMethods.add(r.split(" ")[0]));

    TreeSet<String> actualFields = new TreeSet<>();
    TreeSet<String> actualMessages = new TreeSet<>();
    TreeSet<String> actualMethods = new TreeSet<>();
    for (FileDescriptor file : FILES) {
      for (Descriptor message : file.getMessageTypes()) {
        actualMessages.add(message.getFullName());
        message.getFields().forEach(f -> actualFields.add(f.getFullName()));
      }
      for (ServiceDescriptor service : file.getServices()) {
        service
            .getMethods()
            .forEach(m -> actualMethods.add(service.getFullName() + "/" + m.getName()));
      }
    }

    assertThat(actualMessages).containsExactlyElementsOf(expectedMessages);
    assertThat(actualFields).containsExactlyElementsOf(expectedFields);
    assertThat(actualMethods).containsExactlyElementsOf(expectedMethods);
  }

  @Test
  void protoPackagesAreTheUpstreamOnesAndImportNothing() {
    assertThat(FILES.stream().map(FileDescriptor::getPackage))
        .containsExactly(
            "v1beta1",
            "pluginregistration",
            "v1",
            "k8s.io.kubelet.pkg.apis.dra.v1",
            "k8s.io.kubelet.pkg.apis.dra.v1beta1",
            "v1",
            "v1alpha1");
    assertThat(FILES).allSatisfy(f -> assertThat(f.getDependencies()).isEmpty());
  }

  private static Descriptor findMessage(String fullName) {
    List<String> seen = new ArrayList<>();
    for (FileDescriptor file : FILES) {
      for (Descriptor message : file.getMessageTypes()) {
        if (message.getFullName().equals(fullName)) {
          return message;
        }
        seen.add(message.getFullName());
      }
    }
    throw new AssertionError("no message " + fullName + " among " + seen);
  }

  private static ServiceDescriptor findService(String fullName) {
    for (FileDescriptor file : FILES) {
      for (ServiceDescriptor service : file.getServices()) {
        if (service.getFullName().equals(fullName)) {
          return service;
        }
      }
    }
    throw new AssertionError("no service " + fullName);
  }

  private static String typeOf(FieldDescriptor field) {
    if (field.isMapField()) {
      Descriptor entry = field.getMessageType();
      return "map<"
          + typeOf(entry.findFieldByName("key"))
          + ","
          + typeOf(entry.findFieldByName("value"))
          + ">";
    }
    if (field.getType() == FieldDescriptor.Type.MESSAGE) {
      return "message:" + field.getMessageType().getFullName();
    }
    if (field.getType() == FieldDescriptor.Type.ENUM) {
      return "enum:" + field.getEnumType().getFullName();
    }
    return field.getType().name().toLowerCase(Locale.ROOT);
  }
}
