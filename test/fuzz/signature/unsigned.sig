signer require
{
 "bounds": [],
 "compiler": "attn-compile fuzz",
 "format_version": 4,
 "kernels": [
  [
   0,
   "61b08010c7db75b199734e5526f6b478087a92e58b436ce6214f1e7278835b2d",
   null,
   "./m::k",
   "kernels/k.spv"
  ]
 ],
 "kinds": [
  [
   "spirv",
   "main",
   {
    "subgroup_size": 8
   },
   ""
  ]
 ],
 "manifest_hash": "restamp",
 "plans": [],
 "variants": [
  {
   "entries": [
    [
     0,
     "06167e564ec212a2c37f1dbe61d56b1fa2e850d643b327b2bdcdacf406b13ca5",
     null,
     [],
     [
      0
     ]
    ]
   ],
   "name": "merge_states.h4.d32.f32",
   "parameters": {
    "num_heads": "4",
    "op": "merge_states"
   }
  }
 ]
}