"""One fabric over several machines (``dcnlab run SPEC --servers host1,host2,...``).

Mininet's cluster edition (``mininet.examples.cluster``: ``RemoteMixin``, ``Placer``,
``RemoteGRELink``) is the engine; this package adds what it lacks for BMv2 fabrics:

* :mod:`~dcnlab.emu.cluster.partition`: a placement that keeps cut links few and balances switches
  per machine (recursive Kernighan–Lin bisection), also usable as a Mininet ``Placer``;
* :mod:`~dcnlab.emu.cluster.remote`: one SSH ControlMaster per machine, Unix-socket forwarding of
  each remote switch's P4Runtime socket, and Mininet hosts made remote through ``RemoteMixin``;
* :mod:`~dcnlab.emu.cluster.tunnels`: cut links as VXLAN point-to-point links (and why not GRE or SSH);
* :mod:`~dcnlab.emu.cluster.side`, :mod:`~dcnlab.emu.cluster.agent`: what each machine runs (its run
  namespace, BMv2 processes, veths, tunnel ends, all-pairs probe side), in-process for this machine
  and over SSH for the others;
* :mod:`~dcnlab.emu.cluster.network`: :class:`~dcnlab.emu.cluster.network.ClusterNetwork`, a
  :class:`~dcnlab.emu.network.FabricNetwork` spread over the machines;
* :mod:`~dcnlab.emu.cluster.capacity`: the capacity plan (machines, memory, bring-up, tunnel traffic).
"""
