package io.github.deviceplugin4j.examples.infiniband;

import io.github.deviceplugin4j.examples.fixtures.InfinibandFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Path;

/**
 * The standard test node: mlx5_0 and mlx5_1 on NUMA 0, mlx5_2 and mlx5_3 on NUMA 1, one port each
 * except mlx5_1 (two ports).
 */
final class IbTrees {
  final SysfsTree tree;
  final InfinibandFixture ib;

  IbTrees(Path root) {
    tree = SysfsTree.create(root);
    ib = new InfinibandFixture(tree);
    ib.hca("mlx5_0", "0000:17:00.0", 0, 1);
    ib.hca("mlx5_1", "0000:31:00.0", 0, 2);
    ib.hca("mlx5_2", "0000:b1:00.0", 1, 1);
    ib.hca("mlx5_3", "0000:ca:00.0", 1, 1);
  }
}
