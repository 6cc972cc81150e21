"""`neurok eval`: the pose-fitting benchmark of the NeuROK paper's Table 1 on a 4D dataset split.

pose_pairs   which instances and which (SOURCE, TARGET) poses are evaluated, and TARGET's samples
grid_field   a displacement field on a regular grid: inverse-distance splatting, differentiable trilinear lookup
pca_baseline the linear PCA subspace of training displacements and its IK fit
methods      every row of the table as a method: SOURCE mesh + TARGET samples -> predicted vertices
report       per-pair records -> summaries -> the markdown report
runner       the whole evaluation in one call
"""
